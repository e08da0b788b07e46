import Foundation
import RescindCrypto
import RescindPostgres
import RescindProtocol
import Testing

@testable import AuditService

/// A rotation that revokes nobody (the owner's stolen device) is tracked like a revocation: it
/// names no revoked user, completes when every holder's device acks, and the stolen (retired,
/// so not expected) device's answer is refused; an event of one that erases is refused.
@Suite struct RotationTrackingTests {
    @Test func aRotationCompletesOnTheHoldersAcksAndRefusesTheStolenDevice() async throws {
        try await AuditTestBed.with { bed in
            let emma = TestFamily()
            let adultB = UUID()
            let stolenPhone = TestFamily.Device(userID: emma.ownerUserID)
            let tablet = TestFamily.Device(userID: adultB)
            var rotation = emma.revocation(of: UUID(), devices: [tablet])
            rotation.revokedUserID = nil
            #expect(rotation.expectedDevices.map(\.action) == [.fmkRotation])
            try await bed.publish(rotation)
            try await bed.eventually("tracked") { try await bed.deviceStates(rotation.eventID).count == 1 }
            #expect(try await bed.count("SELECT count(*) FROM revocations WHERE revoked_user_id IS NULL") == 1)
            #expect(try await bed.count("SELECT count(*) FROM audit_log WHERE event_type = 'fmk_rotated'") == 1)

            // The thief answers with the stolen phone's device key: not a device the rotation expects.
            try await bed.publish(TestFamily.ack(stolenPhone, for: rotation), signedBy: stolenPhone.key)
            try await bed.eventually("the stolen device's ack refused") {
                try await bed.count("SELECT count(*) FROM rejected_messages WHERE reason = 'unknown_device'") == 1
            }
            #expect(try await bed.count("SELECT count(*) FROM revocations WHERE completed_at IS NOT NULL") == 0)

            try await bed.publish(TestFamily.ack(tablet, for: rotation), signedBy: tablet.key)
            try await bed.eventually("completed") {
                try await bed.count("SELECT count(*) FROM revocations WHERE completed_at IS NOT NULL") == 1
            }
            #expect(try await bed.deviceStates(rotation.eventID) == [tablet.id: "applied"])
        }
    }

    @Test func aRotationThatErasesIsRefused() async throws {
        try await AuditTestBed.with { bed in
            let emma = TestFamily()
            let adultC = UUID()
            var forged = emma.revocation(of: adultC, devices: [TestFamily.Device(userID: adultC)])
            forged.revokedUserID = nil
            #expect(forged.expectedDevices.map(\.action) == [.secureDeletion])
            try await bed.publish(forged)
            try await bed.eventually("refused") { try await bed.count("SELECT count(*) FROM rejected_messages") == 1 }
            #expect(try await bed.count("SELECT count(*) FROM revocations") == 0)
        }
    }
}
