import Foundation
import RescindCrypto
import RescindPostgres
import RescindProtocol
import Testing

@testable import AuditService

/// Every access change ends up in the family member's chain, sealed to the owner.
@Suite struct AuditLogTests {
    struct StoredEntry {
        let eventType: String
        let actor: UUID
        let target: UUID?
        let sealed: [UInt8]
    }

    static func entries(_ bed: AuditTestBed, of familyMemberID: UUID) async throws -> [StoredEntry] {
        try await bed.withConnection { connection in
            try await connection.query(
                """
                SELECT event_type, actor_user_id, target_user_id, encrypted_details FROM audit_log
                WHERE family_member_id = \(familyMemberID) ORDER BY seq
                """
            ).map { row in
                let (type, actor, target, sealed) = try row.decode(String.self, UUID.self, UUID?.self, [UInt8].self)
                return StoredEntry(eventType: type, actor: actor, target: target, sealed: sealed)
            }
        }
    }

    @Test func everyAccessChangeIsLoggedWithDetailsOnlyTheOwnerCanOpen() async throws {
        try await AuditTestBed.with { bed in
            let emma = TestFamily()
            let adultB = UUID(), adultC = UUID()
            let phoneC = TestFamily.Device(userID: adultC)
            let events: [AccessEvent] = [
                emma.accessEvent(.familyMemberCreated),
                emma.accessEvent(.accessGranted, target: adultB),
                emma.accessEvent(.accessGranted, target: adultC),
            ]
            for event in events { try await bed.publish(event) }
            let revocation = emma.revocation(of: adultC, devices: [phoneC])
            try await bed.publish(revocation)
            try await bed.publish(emma.accessEvent(.accessRegranted, target: adultC))
            try await bed.publish(
                emma.accessEvent(.revokedGrantsPurged, target: adultB, details: ["policy": "retention"]))
            try await bed.eventually("six entries") {
                try await bed.count("SELECT count(*) FROM audit_log") == 6
            }

            let stored = try await Self.entries(bed, of: emma.familyMemberID)
            #expect(Set(stored.map(\.eventType)) == [
                "family_member_created", "access_granted", "access_revoked", "access_regranted", "revoked_grants_purged",
            ])
            let outsider = X25519.PrivateKey()
            for entry in stored {
                let details = try CanonicalJSON.decode(
                    AuditDetails.self, from: Data(try AnonymousSealedBox.open(entry.sealed, using: emma.ownerKey)))
                #expect(details.eventType == entry.eventType)
                #expect(details.familyMemberID == emma.familyMemberID)
                #expect(details.actorUserID == entry.actor)
                #expect(throws: CryptoError.self) { try AnonymousSealedBox.open(entry.sealed, using: outsider) }
                // Nothing readable is stored next to the sealed box.
                #expect(!String(decoding: entry.sealed, as: UTF8.self).contains("custody"))
            }
            let revoked = try #require(stored.first { $0.eventType == "access_revoked" })
            let details = try CanonicalJSON.decode(
                AuditDetails.self, from: Data(try AnonymousSealedBox.open(revoked.sealed, using: emma.ownerKey)))
            #expect(revoked.actor == emma.ownerUserID && revoked.target == adultC)
            #expect(details.reason == "custody change")
            #expect(details.recordsReEncrypted == 500)
            #expect(details.durationMs == 523)
            #expect(details.devicesAffected?.map(\.deviceID) == [phoneC.id])
            #expect(details.devicesAffected?.first?.action == .secureDeletion)
            let purged = try #require(stored.first { $0.eventType == "revoked_grants_purged" })
            let purgeDetails = try CanonicalJSON.decode(
                AuditDetails.self, from: Data(try AnonymousSealedBox.open(purged.sealed, using: emma.ownerKey)))
            #expect(purgeDetails.facts == ["policy": "retention"])
        }
    }

    @Test func ownershipTransferSealsLaterEntriesToTheNewOwner() async throws {
        try await AuditTestBed.with { bed in
            let emma = TestFamily()
            let adult = TestFamily(familyMemberID: emma.familyMemberID)
            try await bed.publish(emma.accessEvent(.familyMemberCreated, at: Date(timeIntervalSinceNow: -60)))
            // The transfer names the new owner (Emma, now an adult) and her key.
            try await bed.publish(
                adult.accessEvent(
                    .ownershipTransferred, target: adult.ownerUserID,
                    details: ["previous_owner_user_id": emma.ownerUserID.uuidString.lowercased()]))
            try await bed.eventually("two entries") { try await bed.count("SELECT count(*) FROM audit_log") == 2 }
            let stored = try await Self.entries(bed, of: emma.familyMemberID)
            #expect(throws: CryptoError.self) { try AnonymousSealedBox.open(stored[1].sealed, using: emma.ownerKey) }
            let details = try CanonicalJSON.decode(
                AuditDetails.self, from: Data(try AnonymousSealedBox.open(stored[1].sealed, using: adult.ownerKey)))
            #expect(details.facts?["previous_owner_user_id"] == emma.ownerUserID.uuidString.lowercased())
            let owner = try await bed.withConnection { connection in
                try await connection.query(
                    "SELECT owner_user_id FROM family_members WHERE family_member_id = \(emma.familyMemberID)"
                ).first!.decode(UUID.self, column: 0)
            }
            #expect(owner == adult.ownerUserID)
        }
    }

    @Test func redeliveredEventsAndAcksChangeNothing() async throws {
        try await AuditTestBed.with { bed in
            let emma = TestFamily()
            let adultC = UUID()
            let phone = TestFamily.Device(userID: adultC), laptop = TestFamily.Device(userID: emma.ownerUserID)
            let created = emma.accessEvent(.familyMemberCreated)
            let revocation = emma.revocation(of: adultC, devices: [phone, laptop])
            let ack = TestFamily.ack(phone, for: revocation)
            // Each message twice, as a relay that crashed after sending would.
            for _ in 0..<2 {
                try await bed.publish(created)
                try await bed.publish(revocation)
                try await bed.publish(ack, signedBy: phone.key)
            }
            try await bed.eventually("the ack applied") {
                try await bed.deviceStates(revocation.eventID)[phone.id] == "applied"
            }
            // A marker message after the duplicates: once it is processed, so were they.
            try await bed.publish(emma.accessEvent(.accessGranted, target: UUID()))
            try await bed.eventually("the marker") { try await bed.count("SELECT count(*) FROM audit_log") >= 3 }
            try await Task.sleep(for: .milliseconds(300))
            #expect(try await bed.count("SELECT count(*) FROM audit_log") == 3)
            #expect(try await bed.count("SELECT count(*) FROM device_acks") == 1)
            #expect(try await bed.count("SELECT count(*) FROM revocations") == 1)
            #expect(try await bed.count("SELECT count(*) FROM notification_outbox") == 0)
            #expect(try await bed.count("SELECT count(*) FROM rejected_messages") == 0)
        }
    }
}
