import Foundation
import RescindClient
import RescindCrypto
import RescindPostgres
import RescindProtocol
import RescindTestSupport
import Testing

@testable import AuditService

/// `rescind access-log --verify` checks the chain on the owner's machine with the audit
/// service's pinned key. The adversary is the audit service itself, compromised: it can write
/// to its own database (edit, remove, reorder, append entries, move the chain head) and serve
/// whatever it likes, but it does not hold the signing key the owner pinned.
@Suite(.serialized) struct ClientChainVerificationTests {
    static func profileDirectory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rescind-pin-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return path
    }

    /// Five entries for a family member owned by `owner`; their log ids in chain order.
    static func chainOfFive(_ bed: AuditTestBed, _ family: TestFamily) async throws -> [UUID] {
        try await bed.publish(family.accessEvent(.familyMemberCreated))
        for _ in 0..<4 { try await bed.publish(family.accessEvent(.accessGranted, target: UUID())) }
        try await bed.eventually("five entries") {
            try await bed.count("SELECT count(*) FROM audit_log WHERE family_member_id = '\(family.familyMemberID)'") == 5
        }
        return try await bed.withConnection { connection in
            try await connection.query(
                "SELECT log_id FROM audit_log WHERE family_member_id = \(family.familyMemberID) ORDER BY seq"
            ).map { try $0.decode(UUID.self, column: 0) }
        }
    }

    /// The owner (a registered user on a real grant service), a real audit service, the owner's
    /// client of it and a fresh profile directory for the pin.
    struct Scene {
        let bed: AuditTestBed
        let ownerID: UUID
        let audit: AuditServiceClient
        let directory: String
        var pin: AuditKeyPin { AuditKeyPin(directory: directory) }
        var verifier: AccessLogVerifier { AccessLogVerifier(audit: audit, pin: pin) }
    }

    static func withScene(_ body: (Scene) async throws -> Void) async throws {
        try await GrantServiceHarness.with { grant in
            let adultA = try await EndToEndTests.member("Adult A", on: grant)
            try await AuditTestBed.with({ $0.grantService.url = grant.baseURL.absoluteString }) { bed in
                let audit = AuditServiceClient(
                    baseURL: bed.service.baseURL, grantService: adultA.session.client, tls: bed.service.clientTLS)
                let directory = try Self.profileDirectory()
                defer { try? FileManager.default.removeItem(atPath: directory) }
                try await body(Scene(bed: bed, ownerID: adultA.userID, audit: audit, directory: directory))
            }
        }
    }

    @Test(.timeLimit(.minutes(4)))
    func theOwnersClientDetectsWhatACompromisedAuditDatabaseDoes() async throws {
        try await Self.withScene { scene in
            let bed = scene.bed
            let pin = scene.pin
            let verifier = scene.verifier

            // Intact: verifies, and pins the key on first use (0600).
            let intact = TestFamily(ownerUserID: scene.ownerID)
            _ = try await Self.chainOfFive(bed, intact)
            let first = try await verifier.verify(intact.familyMemberID)
            #expect(first.report.valid && first.report.entries == 5 && first.pinnedNow)
            #expect(first.report.problems.isEmpty)
            #expect(try pin.pinned() == bed.service.auditKey)
            let mode = try FileManager.default.attributesOfItem(atPath: pin.path)[.posixPermissions] as? Int
            #expect(mode == 0o600)
            let again = try await verifier.verify(intact.familyMemberID)
            #expect(again.report.valid && !again.pinnedNow)

            // Each tampering on a family member of its own.
            func tampered(_ sql: (TestFamily, [UUID]) -> [String]) async throws -> ChainVerificationReport {
                let family = TestFamily(ownerUserID: scene.ownerID)
                let ids = try await Self.chainOfFive(bed, family)
                try await bed.withConnection { connection in
                    for statement in sql(family, ids) { try await connection.execute(PostgresQuery(unsafeSQL: statement)) }
                }
                return try await verifier.verify(family.familyMemberID).report
            }
            let edited = try await tampered { _, ids in
                ["UPDATE audit_log SET occurred_at = occurred_at - interval '1 day' WHERE log_id = '\(ids[2])'"]
            }
            #expect(!edited.valid && edited.problems.map(\.code) == ["altered"])
            #expect(edited.problems.first?.logID != nil)

            let removed = try await tampered { _, ids in ["DELETE FROM audit_log WHERE log_id = '\(ids[2])'"] }
            #expect(!removed.valid && removed.problems.map(\.code).contains("broken_link"))

            let reordered = try await tampered { _, ids in
                [
                    "UPDATE audit_log SET seq = 1000 WHERE log_id = '\(ids[1])'",
                    "UPDATE audit_log SET seq = 2 WHERE log_id = '\(ids[2])'",
                    "UPDATE audit_log SET seq = 3 WHERE log_id = '\(ids[1])'",
                ]
            }
            #expect(!reordered.valid && reordered.problems.map(\.code).contains("altered"))

            // The newest entry cut off; the head row left alone, or moved back to the entry before.
            let cut = try await tampered { _, ids in ["DELETE FROM audit_log WHERE log_id = '\(ids[4])'"] }
            #expect(!cut.valid && cut.problems.map(\.code) == ["truncated"])
            let cutAndMoved = try await tampered { family, ids in
                [
                    "DELETE FROM audit_log WHERE log_id = '\(ids[4])'",
                    """
                    UPDATE audit_chain_heads h SET last_seq = 4, last_hash = l.entry_hash
                    FROM audit_log l WHERE l.log_id = '\(ids[3])' AND h.family_member_id = '\(family.familyMemberID)'
                    """,
                ]
            }
            #expect(!cutAndMoved.valid && cutAndMoved.problems.map(\.code) == ["bad_head_signature"])

            // An entry appended with a correct hash and link, but no signature the key made.
            let appended = try await tampered { family, ids in
                let forged = UUID()
                return [
                    """
                    INSERT INTO audit_log (log_id, family_member_id, seq, event_type, actor_user_id, encrypted_details,
                                           occurred_at, source_id, prev_hash, entry_hash, signature)
                    SELECT '\(forged)', family_member_id, 6, 'access_granted', actor_user_id, encrypted_details,
                           occurred_at, '\(UUID())', entry_hash, entry_hash, signature
                    FROM audit_log WHERE log_id = '\(ids[4])'
                    """
                ]
            }
            #expect(!appended.valid)
            #expect(appended.problems.map(\.code).contains("altered") || appended.problems.map(\.code).contains("bad_signature"))
            #expect(appended.problems.map(\.code).contains("head_mismatch"))

            // The head row removed: the service signs no head for a chain that has entries.
            let headless = TestFamily(ownerUserID: scene.ownerID)
            _ = try await Self.chainOfFive(bed, headless)
            try await bed.withConnection {
                try await $0.execute("DELETE FROM audit_chain_heads WHERE family_member_id = \(headless.familyMemberID)")
            }
            do {
                _ = try await verifier.verify(headless.familyMemberID)
                Issue.record("a chain without its head verified")
            } catch let error as GrantServiceError {
                #expect(error.status == 500 && error.code == "unsigned_chain_head")
            }

            // A swapped audit key is refused, unless the user accepts it.
            try pin.pin(Ed25519.PrivateKey().publicKey)
            await #expect(throws: AuditKeyPin.Changed.self) { try await verifier.verify(intact.familyMemberID) }
            let accepted = try await verifier.verify(intact.familyMemberID, acceptNewKey: true)
            #expect(accepted.report.valid && accepted.pinnedNow)
            #expect(try pin.pinned() == bed.service.auditKey)
        }
    }

    /// The same adversary with a memory of its own: it kept a head the service signed earlier.
    /// Cutting the newest entries off and restoring that head, or cutting them off and letting
    /// the service append new ones in their place, serves a log whose every signature is valid
    /// (a reader without memory accepts it); the owner's machine remembers the head it verified
    /// last and refuses both.
    @Test(.timeLimit(.minutes(4)))
    func aLogCutBackUnderAnOlderSignedHeadFailsAgainstTheHeadVerifiedBefore() async throws {
        try await Self.withScene { scene in
            let (bed, audit, directory, verifier) = (scene.bed, scene.audit, scene.directory, scene.verifier)
            /// A reader who pins the same key but remembers nothing.
            func verifiedWithoutMemory(_ id: UUID) async throws -> ChainVerificationReport {
                let fresh = try Self.profileDirectory()
                defer { try? FileManager.default.removeItem(atPath: fresh) }
                let pin = AuditKeyPin(directory: fresh)
                try pin.pin(bed.service.auditKey)
                return try await AccessLogVerifier(audit: audit, pin: pin).verify(id).report
            }
            let family = TestFamily(ownerUserID: scene.ownerID)
            func entries(_ count: Int) async throws {
                try await bed.eventually("\(count) entries") {
                    try await bed.count("SELECT count(*) FROM audit_log WHERE family_member_id = '\(family.familyMemberID)'") == count
                }
            }
            func grantSomeone() async throws { try await bed.publish(family.accessEvent(.accessGranted, target: UUID())) }

            // Three entries verified; the database keeps the head the service signed then.
            try await bed.publish(family.accessEvent(.familyMemberCreated))
            try await grantSomeone()
            try await grantSomeone()
            try await entries(3)
            #expect(try await verifier.verify(family.familyMemberID).report.valid)
            let keptHead = try await bed.withConnection { connection in
                try await connection.query(
                    "SELECT last_hash, head_signature FROM audit_chain_heads WHERE family_member_id = \(family.familyMemberID)"
                ).first.map { (try $0.decode(Data.self, column: 0), try $0.decode(Data.self, column: 1)) }
            }
            let (keptHash, keptSignature) = try #require(keptHead)

            // Two more, verified: this machine now remembers seq 5.
            try await grantSomeone()
            try await grantSomeone()
            try await entries(5)
            #expect(try await verifier.verify(family.familyMemberID).report.valid)
            #expect(try VerifiedHeads(directory: directory).all()[family.familyMemberID]?.seq == 5)
            let mode = try FileManager.default.attributesOfItem(atPath: VerifiedHeads(directory: directory).path)[.posixPermissions] as? Int
            #expect(mode == 0o600)

            // Rolled back: entries 4 and 5 deleted, the kept head of seq 3 restored.
            try await bed.withConnection { connection in
                try await connection.execute(
                    "DELETE FROM audit_log WHERE family_member_id = \(family.familyMemberID) AND seq > 3")
                try await connection.execute(
                    """
                    UPDATE audit_chain_heads SET last_seq = 3, last_hash = \(keptHash), head_signature = \(keptSignature)
                    WHERE family_member_id = \(family.familyMemberID)
                    """)
            }
            #expect(try await verifiedWithoutMemory(family.familyMemberID).valid)
            let rolledBack = try await verifier.verify(family.familyMemberID).report
            #expect(!rolledBack.valid && rolledBack.problems.map(\.code) == ["rolled_back"], "\(rolledBack.problems)")

            // Rewritten: the service, unaware, appends two new entries at seq 4 and 5.
            try await grantSomeone()
            try await grantSomeone()
            try await entries(5)
            #expect(try await verifiedWithoutMemory(family.familyMemberID).valid)
            let rewritten = try await verifier.verify(family.familyMemberID).report
            #expect(!rewritten.valid && rewritten.problems.map(\.code) == ["rewritten"], "\(rewritten.problems)")
            #expect(rewritten.problems.first?.seq == 5)
            // A refused log is not remembered: the memory still names the head verified before.
            #expect(try VerifiedHeads(directory: directory).all()[family.familyMemberID]?.seq == 5)
        }
    }
}
