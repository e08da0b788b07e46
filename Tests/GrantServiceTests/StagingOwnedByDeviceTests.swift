import Foundation
import Logging
import RescindCrypto
import RescindPostgres
import RescindProtocol
import RescindTestSupport
import Testing

@testable import RescindClient

/// Adversary 1, the thief, against a revocation or rotation in flight: a staging belongs to the
/// device that began it (migration 0017), not only to its user. A device the thief enrolled with the
/// stolen identity key before the stolen one was retired holds a token of the same user: it can
/// neither upload into, commit nor abandon the owner's staging (403 `staging_owned_by_other_device`,
/// nothing stored changes), and once the owner retires it, every staging it began is gone at once.
@Suite(.serialized) struct StagingOwnedByDeviceTests {
    /// What a staging holds, to show a refused call changed nothing: its count, its rows (record,
    /// source sequence and body, in record order), and every body stored.
    static func snapshot(_ service: GrantServiceHarness, _ staging: UUID) async throws -> [String] {
        try await service.withConnection { connection in
            let row = try await connection.query(
                """
                SELECT (SELECT staged_count::text || '/' || expected_count::text || '/' || started_by_device_id::text
                        FROM revocation_stagings WHERE staging_id = \(staging)),
                       (SELECT string_agg(record_id::text || ':' || source_change_seq::text || ':' || body_id::text, ','
                                          ORDER BY record_id)
                        FROM staged_records WHERE staging_id = \(staging)),
                       (SELECT count(*)::text FROM record_bodies),
                       (SELECT string_agg(record_id::text || ':' || change_seq::text || ':' || fmk_version::text, ','
                                          ORDER BY record_id) FROM records)
                """
            ).first!
            let (staged, rows, bodies, records) = try row.decode(String?.self, String?.self, String.self, String.self)
            return [staged ?? "-", rows ?? "-", bodies, records]
        }
    }

    /// The owner rotates Emma on the phone; the thief's device (enrolled with the identity key, as the
    /// thief would before the stolen phone was retired) tries to put its own ciphertext in, abandon
    /// the rotation and commit it with an FMK of its own: each is refused and nothing changes. The
    /// owner's rotation then keeps the no-lost-edit rule (B's edit made meanwhile is refused at the
    /// commit, re-encrypted and committed) and no record opens with the thief's key.
    @Test func theThiefsDeviceCannotTouchTheOwnersRotationInFlight() async throws {
        try await GrantServiceHarness.with { service in
            let home = try await Household.make(service, records: 4)
            let (owner, b) = (home.adultA, home.adultB)
            let thief = try await owner.addDevice(name: "enrolled by the thief")
            let rotation = try await owner.client.beginRotation(home.emma, BeginRotationRequest(reason: "phone stolen"))
            let (commit, newFMK) = try await owner.stage(rotation)
            let before = try await Self.snapshot(service, rotation.revocationID)
            #expect(before[0] == "4/4/\(owner.deviceID.uuidString.lowercased())")

            // The thief re-encrypts Emma's records under an FMK of its own (it holds the old one).
            let thiefFMK = SecretKey()
            let garbage = try await RecordCipher.reseal(
                try await thief.allRecords(home.emma), from: home.fmk, to: thiefFMK, newVersion: rotation.newFMKVersion)
            let thiefGrants = try rotation.remainingGrantees.map {
                try thief.newGrant(thiefFMK, for: $0, familyMemberID: home.emma, version: rotation.newFMKVersion)
            }
            let thiefCommit = CommitRevocationRequest(
                newFMKVersion: rotation.newFMKVersion, grants: thiefGrants,
                statement: try await thief.revokeStatement(rotation, grants: thiefGrants, newFMK: thiefFMK))
            let id = rotation.revocationID
            await expectFailure(403, "staging_owned_by_other_device") { try await thief.client.uploadRevocationBatch(id, garbage) }
            await expectFailure(403, "staging_owned_by_other_device") { try await thief.client.uploadRevocationBatch(id, []) }
            await expectFailure(403, "staging_owned_by_other_device") { try await thief.client.commitRevocation(id, thiefCommit) }
            await expectFailure(403, "staging_owned_by_other_device") { try await thief.client.commitRevocation(id, commit) }
            await expectFailure(403, "staging_owned_by_other_device") { try await thief.client.abandonRevocation(id) }
            // Another user is refused as before; an unknown staging is not found, whoever asks.
            await expectFailure(403, "forbidden") { try await b.client.abandonRevocation(id) }
            await expectFailure(404) { try await thief.client.abandonRevocation(UUID()) }
            #expect(try await Self.snapshot(service, id) == before, "a refused call changed nothing stored")
            #expect(try await owner.client.fmkVersion(home.emma).currentFMKVersion == 1)

            // The no-lost-edit rule is unchanged: B edits a record while the rotation runs; the commit
            // refuses to overwrite it, the owner re-encrypts it as it is now and commits.
            let edited = home.recordIDs[1]
            _ = try await b.putRecord(home.emma, recordID: edited, plaintext: Array("B's edit".utf8), fmk: home.fmk, version: 1)
            await expectFailure(409, "records_changed") { try await owner.client.commitRevocation(id, commit) }
            let now = try await owner.allRecords(home.emma).filter { $0.recordID == edited }
            _ = try await owner.client.uploadRevocationBatch(
                id, try await RecordCipher.reseal(now, from: home.fmk, to: newFMK, newVersion: rotation.newFMKVersion))
            try await owner.stageKeptVersions(rotation, newFMK: newFMK)
            let committed = try await owner.client.commitRevocation(id, commit)
            #expect(committed.newFMKVersion == 2 && committed.recordsReencrypted == 5, "4 records and the version B's edit kept")
            #expect(try await b.currentFMK(home.emma).fmk == newFMK)
            let read = try await b.readRecords(home.emma)
            #expect(read.count == 4 && read[edited] == Array("B's edit".utf8) && read[home.recordIDs[0]] == Array("record 0".utf8))
            for record in try await owner.allRecords(home.emma) {
                #expect(record.fmkVersion == 2)
                #expect(throws: (any Error).self) { try RecordCipher.open(record, fmk: thiefFMK) }
            }
        }
    }

    /// The thief's device begins first: a revocation of Adult C on Emma, its re-encrypted records
    /// uploaded (C's writes are refused while it lives, `revocation_pending`), and a rotation. The
    /// owner's other device cannot abandon them (they are not its own); retiring the thief's device
    /// abandons both at once (their bodies queued), C writes again, and the owner's rotation commits.
    @Test func retiringTheThiefsDeviceAbandonsTheStagingsItBegan() async throws {
        try await GrantServiceHarness.with(WriteOnceBodiesTests.noJanitor) { service in
            let home = try await Household.make(service, records: 3)
            let (owner, c) = (home.adultA, home.adultC)
            let thief = try await owner.addDevice(name: "enrolled by the thief")
            let blocking = try await thief.client.beginRevocation(home.emma, BeginRevocationRequest(revokedUserID: c.keys.userID))
            _ = try await thief.stage(blocking)
            let rotation = try await thief.client.beginRotation(home.emma, BeginRotationRequest())
            #expect(try await service.count("SELECT count(*) FROM revocation_stagings WHERE started_by_device_id = \(thief.deviceID)") == 2)
            await expectFailure(403, "revocation_pending") {
                try await c.putRecord(home.emma, plaintext: Array("C's note".utf8), fmk: home.fmk, version: 1)
            }
            await expectFailure(403, "staging_owned_by_other_device") { try await owner.client.abandonRevocation(blocking.revocationID) }
            await expectFailure(403, "staging_owned_by_other_device") { try await owner.client.abandonRevocation(rotation.revocationID) }
            let garbageBefore = try await service.count("SELECT count(*) FROM record_body_garbage")

            try await owner.client.retireDevice(thief.deviceID)
            #expect(try await service.count("SELECT count(*) FROM revocation_stagings") == 0)
            #expect(try await service.count("SELECT count(*) FROM staged_records") == 0)
            #expect(try await service.count("SELECT count(*) FROM record_body_garbage") == garbageBefore + 3, "the staged bodies queued")
            await expectFailure(401, "device_retired") { try await thief.client.beginRotation(home.emma, BeginRotationRequest()) }
            await expectFailure(404) { try await owner.client.abandonRevocation(blocking.revocationID) }
            // C is free at once (no wait for the staging to expire), and the owner's rotation goes through.
            _ = try await c.putRecord(home.emma, plaintext: Array("C's note".utf8), fmk: home.fmk, version: 1)
            let committed = try await owner.rotate(home.emma, reason: "thief's device retired")
            #expect(committed.newFMKVersion == 2 && committed.recordsReencrypted == 4)
            #expect(try await c.readRecords(home.emma).count == 4)
            #expect(try await WriteOnceBodiesTests.collect(service) >= 3)
        }
    }

    /// A begin racing its device's retirement: held on the family member's row lock while the
    /// owner retires the device, it then finds its device retired (401) and leaves no staging.
    @Test func aBeginRacingItsDevicesRetirementLeavesNoStaging() async throws {
        try await GrantServiceHarness.with { service in
            let home = try await Household.make(service, records: 2)
            let owner = home.adultA
            let thief = try await owner.addDevice(name: "enrolled by the thief")
            _ = try await thief.client.devices()  // authenticated before the retirement: its token is cached
            let waiting: PostgresQuery = """
                SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%FROM family_members%'
                """
            let client = thief.client
            let outcome = try await service.withConnection { holder in
                try await holder.execute("BEGIN")
                try await holder.execute("SELECT 1 FROM family_members WHERE family_member_id = \(home.emma) FOR UPDATE")
                let begin = Task { try await client.beginRotation(home.emma, BeginRotationRequest()) }
                try await service.eventually("the begin waits on the family member") { try await service.count(waiting) >= 1 }
                try await owner.client.retireDevice(thief.deviceID)
                try await holder.execute("ROLLBACK")
                return await begin.result
            }
            switch outcome {
            case .success: Issue.record("a begin that ran after its device's retirement made a staging")
            case .failure(let error as GrantServiceError): #expect(error.status == 401 && error.code == "device_retired", "\(error)")
            case .failure(let error): Issue.record("unexpected \(error)")
            }
            #expect(try await service.count("SELECT count(*) FROM revocation_stagings") == 0)
        }
    }

    /// A user's revocation (`rescind revoke`) begun on the phone: the user's laptop, another device
    /// of the same user, can neither continue nor abandon it. The phone dies mid-revocation: the
    /// owner retires it from the laptop, which frees the family member at once (C, whose revocation
    /// was staged, is no longer blocked until expiry), and revokes C again from the laptop.
    @Test func aRevocationBelongsToTheDeviceThatBeganItAndRetiringThatDeviceFreesIt() async throws {
        try await GrantServiceHarness.with { service in
            let home = try await Household.make(service, records: 3)
            let (phone, c) = (home.adultA, home.adultC)
            let laptop = try await phone.addDevice(name: "Adult A's laptop")
            let revocation = try await phone.client.beginRevocation(home.emma, BeginRevocationRequest(revokedUserID: c.keys.userID))
            let (commit, _) = try await phone.stage(revocation)
            let before = try await Self.snapshot(service, revocation.revocationID)
            let id = revocation.revocationID
            let (records, _, _) = try await laptop.reencrypt(revocation)
            await expectFailure(403, "staging_owned_by_other_device") { try await laptop.client.uploadRevocationBatch(id, records) }
            await expectFailure(403, "staging_owned_by_other_device") { try await laptop.client.commitRevocation(id, commit) }
            await expectFailure(403, "staging_owned_by_other_device") { try await laptop.client.abandonRevocation(id) }
            #expect(try await Self.snapshot(service, id) == before)
            await expectFailure(403, "revocation_pending") {
                try await c.putRecord(home.emma, plaintext: Array("C's note".utf8), fmk: home.fmk, version: 1)
            }

            // The phone dies here. Retiring it abandons its revocation in the same transaction.
            try await laptop.client.retireDevice(phone.deviceID)
            #expect(try await service.count("SELECT count(*) FROM revocation_stagings") == 0)
            _ = try await c.putRecord(home.emma, plaintext: Array("C's note".utf8), fmk: home.fmk, version: 1)
            let committed = try await laptop.revoke(home.emma, user: c.keys.userID, reason: "begun again on the laptop")
            #expect(committed.newFMKVersion == 2 && committed.recordsReencrypted == 4)
            await expectFailure(403) { try await c.client.wrappedKey(home.emma) }
            #expect(try await home.adultB.readRecords(home.emma).count == 4)
        }
    }

    /// `rescind-admin migrate` (the same `PostgresMigrator`) on a populated schema without 0017, with a
    /// rotation in flight (every record staged, its bodies written) and a revocation of C begun: no
    /// device can be proven to have begun them, so 0017 discards both as abandon does. Their staged
    /// bodies are queued and collected, no record changes, C writes again, and the owner's rotation
    /// begun afresh commits.
    @Test func theMigrationDiscardsStagingsInFlightAsAbandonDoes() async throws {
        let migrations = GrantServiceHarness.repositoryRoot.appendingPathComponent("migrations/grant")
        let before = FileManager.default.temporaryDirectory.appendingPathComponent("rescind-0016-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: before, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: before) }
        // Every migration but 0017: the ones after it change nothing 0017 touches, and today's
        // service code needs them.
        var copied = 0
        for name in try FileManager.default.contentsOfDirectory(atPath: migrations.path)
        where name.hasSuffix(".sql") && !name.hasPrefix("0017_") {
            try FileManager.default.copyItem(at: migrations.appendingPathComponent(name), to: before.appendingPathComponent(name))
            copied += 1
        }
        let migratedBefore = copied
        try await GrantServiceHarness.with({
            $0.database.migrationsDirectory = before.path
            $0.lifetimes.janitorInterval = .seconds(3600)
        }) { service in
            #expect(try await service.count("SELECT count(*) FROM schema_migrations") == migratedBefore)
            let home = try await Household.make(service, records: 4)
            let (owner, c) = (home.adultA, home.adultC)
            let (rotation, revocation) = (UUID(), UUID())
            // As 0016 stored them (today's begin names its device, a column 0016 does not have).
            try await service.withConnection { connection in
                for (id, revoked) in [(rotation, nil), (revocation, c.keys.userID)] as [(UUID, UUID?)] {
                    try await connection.execute(
                        """
                        INSERT INTO revocation_stagings (staging_id, family_member_id, revoked_user_id, started_by_user_id,
                                                         from_fmk_version, expected_count, begin_change_seq, expires_at)
                        VALUES (\(id), \(home.emma), \(revoked), \(owner.keys.userID), 1, 4,
                                (SELECT max(change_seq) FROM records WHERE family_member_id = \(home.emma)), now() + interval '1 hour')
                        """)
                }
                try await connection.execute(
                    """
                    WITH source AS (
                        SELECT r.record_id, r.change_seq, b.nonce, b.ciphertext, b.tag, gen_random_uuid() AS staged_body
                        FROM records r JOIN record_bodies b USING (body_id) WHERE r.family_member_id = \(home.emma)),
                    bodies AS (
                        INSERT INTO record_bodies (body_id, nonce, ciphertext, tag)
                        SELECT staged_body, nonce, ciphertext, tag FROM source)
                    INSERT INTO staged_records (staging_id, record_id, source_change_seq, body_id)
                    SELECT \(rotation), record_id, change_seq, staged_body FROM source
                    """)
                try await connection.execute("UPDATE revocation_stagings SET staged_count = 4 WHERE staging_id = \(rotation)")
            }
            #expect(try await service.count("SELECT count(*) FROM record_bodies") == 8)
            await expectFailure(403, "revocation_pending") {
                try await c.putRecord(home.emma, plaintext: Array("C's note".utf8), fmk: home.fmk, version: 1)
            }
            let everyRecord: PostgresQuery = """
                SELECT string_agg(r.record_id::text || ':' || r.change_seq::text || ':' || r.fmk_version::text || ':'
                                  || r.body_id::text || ':' || encode(b.ciphertext, 'hex'), ',' ORDER BY r.record_id)
                FROM records r JOIN record_bodies b USING (body_id)
                """
            let records = try await service.withConnection { try await $0.query(everyRecord).first!.decode(String.self, column: 0) }
            let readBefore = try await home.adultB.readRecords(home.emma)

            let migrator = PostgresMigrator(directory: migrations, schema: service.schema, logger: Logger(label: "test.migrate"))
            #expect(try await service.withConnection { try await migrator.migrate(on: $0) } == ["0017_staging_device.sql"])
            #expect(try await service.count("SELECT count(*) FROM revocation_stagings") == 0)
            #expect(try await service.count("SELECT count(*) FROM staged_records") == 0)
            #expect(try await service.count("SELECT count(*) FROM record_body_garbage") == 4)
            #expect(try await WriteOnceBodiesTests.collect(service) == 4)
            #expect(try await service.count("SELECT count(*) FROM record_bodies") == 4)
            #expect(try await service.withConnection { try await $0.query(everyRecord).first!.decode(String.self, column: 0) } == records,
                    "no record changed")
            #expect(try await home.adultB.readRecords(home.emma) == readBefore)

            await expectFailure(404) { try await owner.client.abandonRevocation(rotation) }
            _ = try await c.putRecord(home.emma, plaintext: Array("C's note".utf8), fmk: home.fmk, version: 1)
            let committed = try await owner.rotate(home.emma, reason: "begun again after the migration")
            #expect(committed.newFMKVersion == 2 && committed.recordsReencrypted == 5)
            #expect(try await service.count(
                "SELECT count(*) FROM revocation_events WHERE event_id = \(committed.eventID) AND revoked_user_id IS NULL") == 1)
            #expect(try await home.adultB.readRecords(home.emma).count == 5)
        }
    }
}
