import Foundation
import RescindCrypto
import RescindPostgres
import RescindProtocol
import RescindTestSupport
import Testing

@testable import RescindClient

/// Restorable records, against the real service and PostgreSQL over HTTP: a record deleted or
/// overwritten by any device is kept, re-encrypted at every revocation and rotation, and restored
/// by the family member's owner alone within the retention.
@Suite struct RestorableRecordTests {
    @Test("a thief with a grantee's unlocked phone deletes and overwrites records; the owner retires it, revokes, and restores every record, which nothing the phone held opens")
    func thiefDeletesAndOverwritesOwnerRestoresEverything() async throws {
        // Adversary: Adult B's phone, unlocked — its token, device key and B's keys, so the FMK v1
        // it unwrapped. It moves first: deletes one of Emma's records and overwrites the others
        // before anyone reacts.
        try await GrantServiceHarness.with { service in
            let owner = try await service.user("Adult A")
            let laptop = try await service.user("Adult B", device: "Adult B's laptop")
            let phone = try await laptop.addDevice(name: "Adult B's phone", kind: .phone, deviceKey: Ed25519.PrivateKey())
            let (emma, fmk) = try await owner.createFamilyMember()
            let originals = (0..<4).map { "2025-0\($0 + 1)-05 lab result \($0)" }
            var recordIDs: [UUID] = []
            for text in originals { recordIDs.append(try await owner.putRecord(emma, plaintext: Array(text.utf8), fmk: fmk, version: 1)) }
            try await owner.grant(emma, to: laptop.keys.userID)

            // The thief's moves, with what the phone holds.
            let (phoneFMK, phoneVersion) = try await phone.currentFMK(emma)
            try await phone.client.deleteRecord(emma, recordIDs[0])
            try await phone.client.deleteRecord(emma, recordIDs[1])
            for recordID in recordIDs[2...] {
                _ = try await phone.putRecord(
                    emma, recordID: recordID, plaintext: Array("nothing to see".utf8), fmk: phoneFMK, version: phoneVersion)
            }
            #expect(try await service.count("SELECT count(*) FROM record_versions WHERE family_member_id = \(emma)") == 4)

            // The owner reacts: the phone retired, B revoked; every kept version is re-encrypted.
            try await laptop.client.retireDevice(phone.deviceID)
            let preview = try await owner.client.revocationPreview(emma, user: laptop.keys.userID)
            #expect(preview.recordCount == 6, "2 live records and 4 kept versions")
            let committed = try await owner.revoke(emma, user: laptop.keys.userID)
            #expect(committed.recordsReencrypted == 6)
            #expect(
                try await service.count(
                    "SELECT count(*) FROM record_versions WHERE family_member_id = \(emma) AND fmk_version <> \(committed.newFMKVersion)")
                    == 0)

            // The owner sees the trash (who did it included) and restores every record.
            let trash = try await owner.trash(emma)
            #expect(Set(trash.versions.map(\.recordID)) == Set(recordIDs) && trash.retentionDays == 30)
            #expect(trash.versions.allSatisfy { $0.byDeviceID == phone.deviceID })
            let (currentFMK, _) = try await owner.currentFMK(emma)
            for (recordID, original) in zip(recordIDs, originals) {
                let restored = try await owner.restoreRecord(emma, recordID)
                #expect(restored.fmkVersion == committed.newFMKVersion)
                #expect(try RecordCipher.open(restored, fmk: currentFMK) == Array(original.utf8))
                let read = try await owner.client.record(emma, recordID)
                #expect(try RecordCipher.open(read, fmk: currentFMK) == Array(original.utf8))
            }

            // Nothing the phone held opens anything stored for Emma now: not a restored record, not
            // a kept version (the thief's overwrites, kept by the restores), at either version.
            let stored = try await Self.storedCiphertexts(emma, service)
            #expect(stored.count == 4 + 2)
            for item in stored {
                for version in [phoneVersion, committed.newFMKVersion] {
                    var attempt = item
                    attempt.fmkVersion = version
                    #expect(throws: CryptoError.self) { try RecordCipher.open(attempt, fmk: phoneFMK) }
                }
            }
            // And the phone itself reaches nothing.
            await expectFailure(401) { try await phone.client.recordVersions(emma) }
            await expectFailure(403, "access_revoked") { try await laptop.client.record(emma, recordIDs[0]) }
        }
    }

    @Test("a version kept while the revocation runs is re-encrypted before the commit (the commit refuses to leave it behind)")
    func versionKeptDuringTheRevocationIsReencrypted() async throws {
        try await GrantServiceHarness.with { service in
            let home = try await Household.make(service)
            let revocation = try await home.adultA.client.beginRevocation(
                home.emma, BeginRevocationRequest(revokedUserID: home.adultB.keys.userID))
            let committed = try await home.adultA.complete(
                revocation, uploadBatchSize: 500, progress: { _ in }, afterFetchingKey: {},
                beforeCommit: { attempt in
                    // Adult C keeps access and deletes a record after the versions were staged.
                    if attempt == 0 { try await home.adultC.client.deleteRecord(home.emma, home.recordIDs[0]) }
                })
            #expect(committed.recordsReencrypted == 3, "2 live records and the deleted one's kept version")
            #expect(
                try await service.count(
                    "SELECT count(*) FROM record_versions WHERE family_member_id = \(home.emma) AND fmk_version = 2") == 1)
            let restored = try await home.adultA.restoreRecord(home.emma, home.recordIDs[0])
            let (fmk, _) = try await home.adultA.currentFMK(home.emma)
            #expect(try RecordCipher.open(restored, fmk: fmk) == Array("record 0".utf8))
            #expect(throws: CryptoError.self) { try RecordCipher.open(restored, fmk: home.fmk) }
        }
    }

    @Test("the database itself refuses a version bump that leaves a kept version under the old FMK")
    func theDatabaseRefusesAKeptVersionLeftBehind() async throws {
        // Adversary: a bug (or a commit path that forgot the versions) with write access to the schema.
        try await GrantServiceHarness.with { service in
            let home = try await Household.make(service, records: 2)
            try await home.adultB.client.deleteRecord(home.emma, home.recordIDs[0])
            var refusal: PostgresError?
            do {
                try await service.withConnection { connection in
                    try await connection.transaction { connection in
                        let emma = home.emma
                        try await connection.execute("UPDATE family_members SET current_fmk_version = 2 WHERE family_member_id = \(emma)")
                        try await connection.execute("UPDATE records SET fmk_version = 2 WHERE family_member_id = \(emma)")
                        try await connection.execute(
                            "UPDATE access_grants SET fmk_version = 2 WHERE family_member_id = \(emma) AND revoked_at IS NULL")
                    }
                }
            } catch let error as PostgresError {
                refusal = error
            }
            #expect(refusal?.isForeignKeyViolation == true && refusal?.table == "record_versions", "\(String(describing: refusal))")
            #expect(try await home.adultA.client.fmkVersion(home.emma).currentFMKVersion == 1)
        }
    }

    @Test("a rotation re-encrypts the kept versions like the records")
    func rotationReencryptsKeptVersions() async throws {
        try await GrantServiceHarness.with { service in
            let home = try await Household.make(service)
            try await home.adultB.client.deleteRecord(home.emma, home.recordIDs[1])
            let committed = try await home.adultA.rotate(home.emma)
            #expect(committed.recordsReencrypted == 3)
            let version = try #require(try await home.adultA.trash(home.emma).versions.first)
            #expect(version.fmkVersion == committed.newFMKVersion)
            #expect(throws: CryptoError.self) { try RecordCipher.open(version.asRecord, fmk: home.fmk) }
            let (fmk, _) = try await home.adultA.currentFMK(home.emma)
            #expect(try RecordCipher.open(version.asRecord, fmk: fmk) == Array("record 1".utf8))
        }
    }

    @Test("a restore by a non-owner, of a version past the retention, of another family member's record: a clear JSON error, nothing changed")
    func badRestoresChangeNothing() async throws {
        try await GrantServiceHarness.with({ $0.lifetimes.janitorInterval = .seconds(3600) }) { service in
            let home = try await Household.make(service)
            let stranger = try await service.user("Stranger")
            let (liam, liamFMK) = try await home.adultA.createFamilyMember()
            let liamRecord = try await home.adultA.putRecord(liam, plaintext: Array("liam".utf8), fmk: liamFMK, version: 1)
            try await home.adultB.client.deleteRecord(home.emma, home.recordIDs[0])
            _ = try await home.adultB.putRecord(
                home.emma, recordID: home.recordIDs[1], plaintext: Array("overwritten".utf8), fmk: home.fmk, version: 1)
            try await home.adultA.client.deleteRecord(liam, liamRecord)
            let http = service.http
            let before = try await Self.state(service)

            // Not the owner: a grantee, a stranger.
            for session in [home.adultB, stranger] {
                let token = try await session.token()
                for recordID in home.recordIDs[0...1] {
                    expectError(
                        try await http.send(
                            "POST", "v1/family-members/\(home.emma)/records/\(recordID)/restore", token: token,
                            json: RestoreRecordRequest()),
                        403, "forbidden")
                }
                expectError(try await http.send("GET", "v1/family-members/\(home.emma)/record-versions", token: token), 403, "forbidden")
            }
            // Another family member's record, through Emma; a record never kept; a version of another record.
            await expectFailure(422, "record_of_other_family_member") { try await home.adultA.restoreRecord(home.emma, liamRecord) }
            await expectFailure(404, "no_restorable_version") { try await home.adultA.restoreRecord(home.emma, UUID()) }
            await expectFailure(404, "no_restorable_version") { try await home.adultA.restoreRecord(home.emma, home.recordIDs[2]) }
            let kept = try await home.adultA.trash(home.emma).versions
            let other = try #require(kept.first { $0.recordID == home.recordIDs[1] })
            await expectFailure(404, "no_restorable_version") {
                try await home.adultA.restoreRecord(home.emma, home.recordIDs[0], version: other.versionID)
            }
            // Past the retention (time made to pass in the database, the service's clock).
            try await service.withConnection {
                try await $0.execute(
                    "UPDATE record_versions SET created_at = now() - interval '30 days 1 minute' WHERE family_member_id = \(home.emma)")
            }
            let expiredBefore = try await Self.state(service)
            let expired = try await http.send(
                "POST", "v1/family-members/\(home.emma)/records/\(home.recordIDs[0])/restore",
                token: try await home.adultA.token(), json: RestoreRecordRequest())
            expectError(expired, 410, "restore_window_passed")
            #expect(try await Self.state(service) == expiredBefore)
            // Before the clock moved, nothing had changed either.
            #expect(expiredBefore.records == before.records && expiredBefore.versions.count == before.versions.count)
        }
    }

    @Test("the janitor deletes kept versions past the retention, with their bodies, and keeps younger ones")
    func janitorPurgesPastTheRetention() async throws {
        try await GrantServiceHarness.with({ $0.lifetimes.janitorInterval = .milliseconds(200) }) { service in
            let home = try await Household.make(service)
            try await home.adultB.client.deleteRecord(home.emma, home.recordIDs[0])
            try await home.adultB.client.deleteRecord(home.emma, home.recordIDs[1])
            let old = try #require(try await home.adultA.trash(home.emma).versions.first { $0.recordID == home.recordIDs[0] })
            try await service.withConnection {
                try await $0.execute(
                    "UPDATE record_versions SET created_at = now() - interval '31 days' WHERE version_id = \(old.versionID)")
            }
            try await service.eventually("the janitor deletes the expired version") {
                try await service.count("SELECT count(*) FROM record_versions WHERE version_id = \(old.versionID)") == 0
            }
            #expect(try await service.count("SELECT count(*) FROM record_versions") == 1)
            // Only the bodies of the two live records and of the younger version remain.
            #expect(try await service.count("SELECT count(*) FROM record_bodies") == 2)
            await expectFailure(404, "no_restorable_version") { try await home.adultA.restoreRecord(home.emma, home.recordIDs[0]) }
            _ = try await home.adultA.restoreRecord(home.emma, home.recordIDs[1])
        }
    }

    /// Every ciphertext stored for the family member: its live records and kept versions.
    static func storedCiphertexts(_ familyMemberID: UUID, _ service: GrantServiceHarness) async throws -> [RecordResponse] {
        try await service.withConnection { connection in
            try await connection.query(
                """
                SELECT r.record_id, r.fmk_version, b.nonce, b.ciphertext, b.tag
                FROM records r JOIN record_bodies b USING (body_id) WHERE r.family_member_id = \(familyMemberID)
                UNION ALL
                SELECT v.record_id, v.fmk_version, b.nonce, b.ciphertext, b.tag
                FROM record_versions v JOIN record_bodies b USING (body_id) WHERE v.family_member_id = \(familyMemberID)
                """
            ).map { row in
                let (recordID, version, nonce, ciphertext, tag) = try row.decode(UUID.self, Int.self, Data.self, Data.self, Data.self)
                return RecordResponse(
                    recordID: recordID, familyMemberID: familyMemberID, fmkVersion: version, nonce: nonce, ciphertext: ciphertext,
                    tag: tag, changeSeq: 0)
            }
        }
    }

    /// What a refused restore must leave as it was: every record (id, body, change) and every kept version.
    struct State: Equatable {
        var records: [String]
        var versions: [String]
        var tombstones: [String]
    }

    static func state(_ service: GrantServiceHarness) async throws -> State {
        try await service.withConnection { connection in
            func rows(_ query: PostgresQuery) async throws -> [String] {
                try await connection.query(query).map { try $0.decode(String.self, column: 0) }
            }
            return State(
                records: try await rows("SELECT record_id || ' ' || body_id || ' ' || change_seq FROM records ORDER BY 1"),
                versions: try await rows(
                    "SELECT version_id || ' ' || body_id || ' ' || kind || ' ' || created_at FROM record_versions ORDER BY 1"),
                tombstones: try await rows("SELECT record_id || ' ' || change_seq FROM record_tombstones ORDER BY 1"))
        }
    }
}
