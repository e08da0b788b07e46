import Foundation
import Logging
import RescindCrypto
import RescindPostgres
import RescindProtocol
import RescindTestSupport
import Testing

@testable import GrantService
@testable import RescindClient

/// Record bodies are written once (migration 0014): `record_bodies` holds the
/// ciphertexts, `records` and `staged_records` name theirs; a revocation's commit points the
/// records at the bodies its upload wrote and queues the old ones, which the janitor deletes
/// afterwards (`RecordBodies`). These tests play the states that design adds: the time between a
/// commit and its cleanup, abandoned and expired revocations, an edit during the upload, a
/// compromised database pointing records at other bodies, and the migration of existing data.
@Suite struct WriteOnceBodiesTests {
    /// The janitor never runs by itself here: the tests call its steps when they choose.
    static func noJanitor(_ configuration: inout GrantServiceConfiguration) { configuration.lifetimes.janitorInterval = .seconds(3600) }

    static func counts(_ service: GrantServiceHarness) async throws -> (bodies: Int, records: Int, garbage: Int, staged: Int) {
        (
            try await service.count("SELECT count(*) FROM record_bodies"), try await service.count("SELECT count(*) FROM records"),
            try await service.count("SELECT count(*) FROM record_body_garbage"),
            try await service.count("SELECT count(*) FROM staged_records")
        )
    }

    static func collect(_ service: GrantServiceHarness) async throws -> Int {
        try await service.withConnection { try await RecordBodies.collect(on: $0) }
    }

    /// A crash right after the commit (its cleanup never ran) leaves the old bodies queued and
    /// unreferenced: every reader sees the new records only. The cleanup run later deletes exactly
    /// those bodies, and keeps a queued body that a record still names.
    @Test func aCrashBetweenTheCommitAndTheCleanupLeavesOnlyInvisibleBodies() async throws {
        try await GrantServiceHarness.with(Self.noJanitor) { service in
            let home = try await Household.make(service, records: 5)
            let before = try await home.adultB.readRecords(home.emma)
            #expect(try await Self.counts(service).bodies == 5)
            let committed = try await home.adultA.revoke(home.emma, user: home.adultC.keys.userID)
            #expect(committed.recordsReencrypted == 5)

            // The state a crash after the commit leaves: old bodies queued, still stored.
            var counts = try await Self.counts(service)
            #expect(counts.records == 5 && counts.bodies == 10 && counts.garbage == 5 && counts.staged == 0)
            #expect(try await service.count("SELECT count(*) FROM record_body_garbage g JOIN records r USING (body_id)") == 0)
            #expect(try await service.count("SELECT count(*) FROM record_body_garbage g JOIN record_bodies b USING (body_id)") == 5)
            // Nothing of the old state is visible: every record reads under the new FMK, the feed has
            // each record once, at version 2.
            #expect(try await home.adultB.readRecords(home.emma) == before)
            let page = try await home.adultB.client.changes(home.emma, since: 0, limit: 100)
            #expect(page.records.count == 5 && page.records.allSatisfy { $0.fmkVersion == 2 })
            #expect(page.deletedRecordIDs.isEmpty && !page.hasMore)

            // A queued body a record still names (no write path queues one) is never deleted.
            let live = try await service.withConnection {
                try await $0.query("SELECT body_id FROM records WHERE record_id = \(home.recordIDs[0])").first!.decode(UUID.self, column: 0)
            }
            try await service.withConnection { try await $0.execute("INSERT INTO record_body_garbage (body_id) VALUES (\(live))") }

            #expect(try await Self.collect(service) == 5)
            counts = try await Self.counts(service)
            #expect(counts.records == 5 && counts.bodies == 5 && counts.garbage == 0)
            #expect(try await home.adultB.readRecords(home.emma) == before)
            #expect(try await Self.collect(service) == 0)
        }
    }

    /// The janitor's own sweep does the cleanup when it runs.
    @Test func theJanitorDeletesTheReplacedBodies() async throws {
        try await GrantServiceHarness.with({ $0.lifetimes.janitorInterval = .milliseconds(200) }) { service in
            let home = try await Household.make(service, records: 3)
            _ = try await home.adultA.revoke(home.emma, user: home.adultC.keys.userID)
            try await service.eventually("the janitor deletes the replaced bodies") {
                try await service.count("SELECT count(*) FROM record_bodies") == 3
            }
            #expect(try await service.count("SELECT count(*) FROM record_body_garbage") == 0)
            #expect(try await home.adultB.readRecords(home.emma).count == 3)
        }
    }

    /// An abandoned revocation's uploaded bodies were never visible, and are removed; a record
    /// uploaded twice keeps one staged body.
    @Test func anAbandonedRevocationsBodiesAreNeverVisibleAndAreRemoved() async throws {
        try await GrantServiceHarness.with(Self.noJanitor) { service in
            let home = try await Household.make(service, records: 3)
            let before = try await home.adultB.readRecords(home.emma)
            let revocation = try await home.adultA.client.beginRevocation(
                home.emma, BeginRevocationRequest(revokedUserID: home.adultC.keys.userID))
            let (staged, _, _) = try await home.adultA.reencrypt(revocation)
            _ = try await home.adultA.client.uploadRevocationBatch(revocation.revocationID, staged)
            // The same batch again replaces the first upload, bodies included.
            let again = try await home.adultA.client.uploadRevocationBatch(revocation.revocationID, staged)
            #expect(again.totalStaged == 3)
            var counts = try await Self.counts(service)
            #expect(counts.records == 3 && counts.bodies == 6 && counts.staged == 3 && counts.garbage == 0)
            // Staged bodies are invisible: the feed and the reads show the records as they were.
            #expect(try await home.adultB.readRecords(home.emma) == before)
            let page = try await home.adultB.client.changes(home.emma, since: 0, limit: 100)
            #expect(page.records.count == 3 && page.records.allSatisfy { $0.fmkVersion == 1 })

            try await home.adultA.client.abandonRevocation(revocation.revocationID)
            counts = try await Self.counts(service)
            #expect(counts.staged == 0 && counts.garbage == 3)
            #expect(try await Self.collect(service) == 3)
            counts = try await Self.counts(service)
            #expect(counts.records == 3 && counts.bodies == 3 && counts.garbage == 0)
            #expect(try await home.adultB.readRecords(home.emma) == before)
        }
    }

    /// An expired revocation: refused by the API at once; the janitor's expiry queues its bodies
    /// with the staging's deletion and the cleanup removes them. Nothing of it was ever visible.
    @Test func anExpiredRevocationsBodiesAreRemoved() async throws {
        try await GrantServiceHarness.with(Self.noJanitor) { service in
            let home = try await Household.make(service, records: 4)
            let before = try await home.adultB.readRecords(home.emma)
            let revocation = try await home.adultA.client.beginRevocation(
                home.emma, BeginRevocationRequest(revokedUserID: home.adultC.keys.userID))
            let (commit, _) = try await home.adultA.stage(revocation, batchSize: 2)
            #expect(try await Self.counts(service).bodies == 8)
            try await service.expire(revocation.revocationID)
            await expectFailure(404, "not_found") { try await home.adultA.client.commitRevocation(revocation.revocationID, commit) }

            let expired = try await service.withConnection { try await RecordBodies.expireStagings(on: $0) }
            #expect(expired == 1)
            var counts = try await Self.counts(service)
            #expect(counts.staged == 0 && counts.garbage == 4 && counts.bodies == 8)
            #expect(try await Self.collect(service) == 4)
            counts = try await Self.counts(service)
            #expect(counts.records == 4 && counts.bodies == 4 && counts.garbage == 0)
            #expect(try await home.adultB.readRecords(home.emma) == before)
            #expect(try await home.adultC.client.wrappedKey(home.emma).fmkVersion == 1)
        }
    }

    /// B edits a record after the owner's client downloaded it, while the upload is under way:
    /// the commit is refused (409), B's edit stays visible, the staged body never is; once the
    /// edited record is re-encrypted from its new content the commit goes through with the edit.
    @Test func anEditDuringTheUploadIsRefusedAndKept() async throws {
        try await GrantServiceHarness.with(Self.noJanitor) { service in
            let home = try await Household.make(service, records: 3)
            let a = home.adultA
            let revocation = try await a.client.beginRevocation(home.emma, BeginRevocationRequest(revokedUserID: home.adultC.keys.userID))
            let (staged, grants, newFMK) = try await a.reencrypt(revocation)
            _ = try await a.client.uploadRevocationBatch(revocation.revocationID, Array(staged.prefix(1)))
            let edited = Array("edited during the upload".utf8)
            _ = try await home.adultB.putRecord(home.emma, recordID: staged[0].recordID, plaintext: edited, fmk: home.fmk, version: 1)
            _ = try await a.client.uploadRevocationBatch(revocation.revocationID, Array(staged.dropFirst()))
            let statement = try await a.revokeStatement(revocation, grants: grants, newFMK: newFMK)
            let commit = CommitRevocationRequest(newFMKVersion: revocation.newFMKVersion, grants: grants, statement: statement)
            await expectFailure(409, "records_changed") { try await a.client.commitRevocation(revocation.revocationID, commit) }
            // Refused and nothing changed: the edit is what everyone reads, under FMK v1.
            #expect(try await home.adultB.readRecords(home.emma)[staged[0].recordID] == edited)
            #expect(try await service.count("SELECT count(*) FROM records WHERE fmk_version <> 1") == 0)
            // 3 live bodies + the one the edit replaced (kept, restorable) + 3 staged.
            #expect(try await Self.counts(service).bodies == 7)

            // Re-encrypt the edited record from its new content; the commit now keeps the edit.
            let current = try await a.allRecords(home.emma).filter { $0.recordID == staged[0].recordID }
            let redo = try await RecordCipher.reseal(current, from: home.fmk, to: newFMK, newVersion: revocation.newFMKVersion)
            _ = try await a.client.uploadRevocationBatch(revocation.revocationID, redo)
            #expect(try await Self.counts(service).bodies == 7)
            // The kept version is re-encrypted too: one more staged body.
            try await a.stageKeptVersions(revocation, newFMK: newFMK)
            let committed = try await a.client.commitRevocation(revocation.revocationID, commit)
            #expect(committed.recordsReencrypted == 4)
            #expect(try await home.adultB.readRecords(home.emma)[staged[0].recordID] == edited)
            #expect(try await Self.collect(service) == 4)
            let counts = try await Self.counts(service)
            #expect(counts.records == 3 && counts.bodies == 4 && counts.garbage == 0 && counts.staged == 0)
        }
    }

    /// A record deleted after the download is not brought back by the commit, and its staged body
    /// is queued with the replaced ones; its live body is kept as a restorable version, re-encrypted.
    @Test func aRecordDeletedDuringTheRevocationLeavesOnlyItsKeptVersion() async throws {
        try await GrantServiceHarness.with(Self.noJanitor) { service in
            let home = try await Household.make(service, records: 3)
            let revocation = try await home.adultA.client.beginRevocation(
                home.emma, BeginRevocationRequest(revokedUserID: home.adultC.keys.userID))
            let (commit, newFMK) = try await home.adultA.stage(revocation)
            try await home.adultB.client.deleteRecord(home.emma, home.recordIDs[2])
            await expectFailure(409, "records_changed") {
                try await home.adultA.client.commitRevocation(revocation.revocationID, commit)
            }
            try await home.adultA.stageKeptVersions(revocation, newFMK: newFMK)
            let committed = try await home.adultA.client.commitRevocation(revocation.revocationID, commit)
            #expect(committed.recordsReencrypted == 3, "2 records and the deleted one's kept version")
            // 2 replaced bodies, the deleted record's staged one, and the kept version's old one.
            #expect(try await Self.counts(service).garbage == 4)
            #expect(try await Self.collect(service) == 4)
            let counts = try await Self.counts(service)
            #expect(counts.records == 2 && counts.bodies == 3)
            #expect(try await home.adultB.readRecords(home.emma).keys.sorted() == home.recordIDs.prefix(2).sorted())
        }
    }

    /// Someone with write access to the database points records at bodies that are not theirs: a
    /// copy of another record's body of the same family member, and a copy of another family
    /// member's body. The client's AEAD (record id and FMK version in the associated data) refuses
    /// both: the read fails closed, nothing is returned. Sharing a body outright is refused by the
    /// schema itself.
    @Test func aRecordPointedAtAnotherBodyFailsClosed() async throws {
        try await GrantServiceHarness.with(Self.noJanitor) { service in
            let home = try await Household.make(service, records: 2)
            let (liam, liamFMK) = try await home.adultA.createFamilyMember()
            let liamRecord = try await home.adultA.putRecord(liam, plaintext: Array("liam".utf8), fmk: liamFMK, version: 1)
            #expect(try await home.adultB.readRecords(home.emma).count == 2)

            func point(_ record: UUID, atACopyOf source: UUID) async throws {
                try await service.withConnection { connection in
                    let copy = UUID()
                    try await connection.execute(
                        """
                        INSERT INTO record_bodies (body_id, nonce, ciphertext, tag)
                        SELECT \(copy), b.nonce, b.ciphertext, b.tag FROM records r JOIN record_bodies b USING (body_id)
                        WHERE r.record_id = \(source)
                        """)
                    try await connection.execute("UPDATE records SET body_id = \(copy) WHERE record_id = \(record)")
                }
            }
            // Another record's body, same family member, same FMK: only the record id differs.
            try await point(home.recordIDs[0], atACopyOf: home.recordIDs[1])
            await #expect(throws: CryptoError.self) { try await home.adultB.readRecords(home.emma) }
            await #expect(throws: CryptoError.self) { try await home.adultA.readRecords(home.emma) }
            // Another family member's body (another FMK, another record id).
            try await point(home.recordIDs[1], atACopyOf: liamRecord)
            let record = try await home.adultB.client.record(home.emma, home.recordIDs[1])
            #expect(throws: CryptoError.self) { try RecordCipher.open(record, fmk: home.fmk) }
            // Two records naming one body: the schema refuses it.
            await #expect(throws: PostgresError.self) {
                try await service.withConnection { connection in
                    try await connection.execute(
                        """
                        UPDATE records SET body_id = (SELECT body_id FROM records WHERE record_id = \(liamRecord))
                        WHERE record_id = \(home.recordIDs[0])
                        """)
                }
            }
        }
    }

    /// `rescind-admin migrate` (the same `PostgresMigrator`) on a grant schema holding records and a
    /// revocation in flight: every body moves to `record_bodies` (the staged ones too), the staged
    /// rows lose their foreign key (0015, same run), every record reads back through the API as it
    /// was written. The in-flight revocation names no device, so 0017 (stagings belong to the device
    /// that began them) discards it as abandon does: its staged bodies queued and collected, nothing
    /// swapped in; committing it is a 404, and the owner's revocation begun again commits.
    @Test func theMigrationMovesExistingBodies() async throws {
        let migrations = GrantServiceHarness.repositoryRoot.appendingPathComponent("migrations/grant")
        let before = FileManager.default.temporaryDirectory.appendingPathComponent("rescind-0013-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: before, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: before) }
        // The migrations under test are 0014 to 0017; the others (before them, and the later ones
        // that touch none of their tables but that today's service code needs) are applied first.
        let underTest = { (name: String) in name >= "0014" && name < "0018" }
        var migratedBefore = 0
        for name in try FileManager.default.contentsOfDirectory(atPath: migrations.path) where name.hasSuffix(".sql") && !underTest(name) {
            try FileManager.default.copyItem(at: migrations.appendingPathComponent(name), to: before.appendingPathComponent(name))
            migratedBefore += 1
        }
        let appliedBefore = migratedBefore
        let adjust: (inout GrantServiceConfiguration) -> Void = {
            $0.database.migrationsDirectory = before.path
            $0.lifetimes.janitorInterval = .seconds(3600)
        }
        try await GrantServiceHarness.with(adjust) { service in
            #expect(try await service.count("SELECT count(*) FROM schema_migrations") == appliedBefore)
            let home = try await Household.make(service, records: 0)
            // Records as the schema before 0014 stored them: the body inline.
            var plaintexts: [UUID: [UInt8]] = [:]
            try await service.withConnection { connection in
                for index in 0..<20 {
                    let id = UUID()
                    plaintexts[id] = Array("record \(index) written before 0014".utf8)
                    let sealed = try RecordCipher.seal(plaintexts[id]!, recordID: id, version: 1, fmk: home.fmk)
                    try await connection.execute(
                        """
                        INSERT INTO records (record_id, family_member_id, fmk_version, nonce, ciphertext, tag)
                        VALUES (\(id), \(home.emma), 1, \(sealed.nonce), \(sealed.ciphertext), \(sealed.tag))
                        """)
                }
            }
            // A revocation in flight, begun and its uploads staged as 0013 stored them (today's begin
            // names its device, a column 0013 does not have).
            let a = home.adultA
            let revocationID = UUID()
            let newFMK = SecretKey()
            try await service.withConnection { connection in
                try await connection.execute(
                    """
                    INSERT INTO revocation_stagings (staging_id, family_member_id, revoked_user_id, started_by_user_id,
                                                     from_fmk_version, expected_count, begin_change_seq, expires_at)
                    VALUES (\(revocationID), \(home.emma), \(home.adultC.keys.userID), \(a.keys.userID), 1, 20,
                            (SELECT max(change_seq) FROM records WHERE family_member_id = \(home.emma)), now() + interval '1 hour')
                    """)
                for row in try await connection.query("SELECT record_id, change_seq FROM records WHERE family_member_id = \(home.emma)") {
                    let (id, seq) = try row.decode(UUID.self, Int64.self)
                    let sealed = try RecordCipher.seal(plaintexts[id]!, recordID: id, version: 2, fmk: newFMK)
                    try await connection.execute(
                        """
                        INSERT INTO staged_records (staging_id, record_id, source_change_seq, nonce, ciphertext, tag)
                        VALUES (\(revocationID), \(id), \(seq), \(sealed.nonce), \(sealed.ciphertext), \(sealed.tag))
                        """)
                }
                try await connection.execute(
                    "UPDATE revocation_stagings SET staged_count = 20 WHERE staging_id = \(revocationID)")
            }

            // The migration, on the populated schema.
            let migrator = PostgresMigrator(directory: migrations, schema: service.schema, logger: Logger(label: "test.migrate"))
            // 0014 and the three after it (0015's write path, 0016's rotations, 0017's staging devices)
            // on the populated schema without them.
            let pending = try FileManager.default.contentsOfDirectory(atPath: migrations.path)
                .filter { $0.hasSuffix(".sql") && underTest($0) }.sorted()
            #expect(pending.first == "0014_record_bodies.sql")
            #expect(try await service.withConnection { try await migrator.migrate(on: $0) } == pending)
            // 0014 moved the staged bodies beside the records'; 0017 discarded the staging and queued them.
            var counts = try await Self.counts(service)
            #expect(counts.records == 20 && counts.staged == 0 && counts.bodies == 40 && counts.garbage == 20)
            #expect(try await service.count("SELECT count(*) FROM revocation_stagings") == 0)
            #expect(try await service.count(
                "SELECT count(*) FROM information_schema.columns WHERE table_schema = \(service.schema) AND column_name = 'ciphertext'") == 1)
            #expect(try await Self.collect(service) == 20)
            counts = try await Self.counts(service)
            #expect(counts.records == 20 && counts.bodies == 20 && counts.garbage == 0)

            // Through the API: the records read back as written (nothing of the discarded staging was
            // swapped in), the discarded revocation is gone, and begun again it commits.
            #expect(try await home.adultB.readRecords(home.emma) == plaintexts)
            await expectFailure(404) { try await a.client.abandonRevocation(revocationID) }
            let committed = try await a.revoke(home.emma, user: home.adultC.keys.userID)
            #expect(committed.recordsReencrypted == 20 && committed.newFMKVersion == 2)
            #expect(try await home.adultB.currentFMK(home.emma).fmk != home.fmk)
            #expect(try await home.adultB.readRecords(home.emma) == plaintexts)
            #expect(try await Self.collect(service) == 20)
            counts = try await Self.counts(service)
            #expect(counts.records == 20 && counts.bodies == 20 && counts.staged == 0)
        }
    }
}
