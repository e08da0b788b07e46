import Foundation
import RescindCrypto
import RescindPostgres
import RescindProtocol
import Testing

@testable import AuditService

/// Each expected device's command has a lifecycle: signed receipts
/// (`delivered`, `not_now`) move its state without completing anything, `healed` completes like
/// `already_applied`, and the states show in the revocation API (with each device's history and
/// the counts per state) and in the metrics.
@Suite struct CommandLifecycleTests {
    static func receipt(
        _ device: TestFamily.Device, for event: RevocationEvent, _ outcome: DeviceAck.Outcome, at: Date
    ) -> DeviceAck {
        var ack = TestFamily.ack(device, for: event, outcome: outcome)
        ack.recordsProcessed = 0
        ack.fmkVersion = event.newFMKVersion - 1  // what it held before acting
        ack.durationMs = 0
        ack.ackedAt = Timestamp.truncated(at)
        return ack
    }

    @Test func receiptsMoveTheStateHealedCompletesAndTheAPIShowsTheHistory() async throws {
        try await AuditTestBed.with { bed in
            let emma = TestFamily()
            let adultC = UUID()
            let phone = TestFamily.Device(userID: emma.ownerUserID), tablet = TestFamily.Device(userID: emma.ownerUserID)
            let laptop = TestFamily.Device(userID: adultC)
            let revocation = emma.revocation(of: adultC, devices: [phone, tablet, laptop])
            try await bed.publish(revocation)
            try await bed.eventually("tracked") { try await bed.deviceStates(revocation.eventID).count == 3 }

            let start = Date()  // after the commit: the history is ordered by time
            try await bed.publish(Self.receipt(phone, for: revocation, .delivered, at: start), signedBy: phone.key)
            try await bed.publish(Self.receipt(tablet, for: revocation, .notNow, at: start), signedBy: tablet.key)
            try await bed.eventually("receipts") {
                try await bed.deviceStates(revocation.eventID) == [phone.id: "delivered", tablet.id: "not_now", laptop.id: "pending"]
            }
            // Receipts answer nothing: the revocation stays open, and the gauges say where each device is.
            #expect(try await bed.count("SELECT count(*) FROM revocations WHERE completed_at IS NOT NULL") == 0)
            try await bed.eventually("gauges per state") {
                let metrics = String(decoding: try await bed.get("/metrics").body, as: UTF8.self)
                return metrics.contains(#"rescind_audit_device_commands{state="delivered"} 1"#)
                    && metrics.contains(#"rescind_audit_device_commands{state="not_now"} 1"#)
                    && metrics.contains(#"rescind_audit_device_commands{state="pending"} 1"#)
            }

            // The phone applies; the tablet, unlocked, applies; the laptop had healed past it.
            var applied = TestFamily.ack(phone, for: revocation)
            applied.ackedAt = Timestamp.truncated(start.addingTimeInterval(1))
            try await bed.publish(applied, signedBy: phone.key)
            // A receipt older than the answer (reordered) does not move a device back.
            try await bed.publish(Self.receipt(phone, for: revocation, .delivered, at: start), signedBy: phone.key)
            var healed = TestFamily.ack(laptop, for: revocation, outcome: .healed)
            healed.fmkVersion = 0
            try await bed.publish(healed, signedBy: laptop.key)
            try await bed.eventually("healed") { try await bed.deviceStates(revocation.eventID)[laptop.id] == "healed" }
            #expect(try await bed.count("SELECT count(*) FROM revocations WHERE completed_at IS NOT NULL") == 0)
            try await bed.publish(TestFamily.ack(tablet, for: revocation), signedBy: tablet.key)
            let completed = try #require(try await bed.notifications(count: 1).first)
            #expect(completed.kind == .revocationCompleted)
            #expect(completed.devices?.first { $0.deviceID == laptop.id }?.state == "healed")

            let answer = try await bed.get("/v1/revocations/\(revocation.eventID)", token: bed.operatorToken)
            #expect(answer.status == 200)
            let status = try CanonicalJSON.decode(RevocationStatus.self, from: answer.body)
            let devices = Dictionary(uniqueKeysWithValues: status.devices.map { ($0.deviceID, $0) })
            #expect(devices[phone.id]?.state == "applied")
            #expect(devices[phone.id]?.attempts == 1)
            #expect(devices[phone.id]?.history?.map(\.state) == ["issued", "delivered", "delivered", "applied"])
            #expect(devices[tablet.id]?.history?.map(\.state) == ["issued", "not_now", "applied"])
            #expect(devices[laptop.id]?.history?.map(\.state) == ["issued", "healed"])

            let list = try CanonicalJSON.decode(
                RevocationStatusList.self, from: try await bed.get("/v1/revocations", token: bed.operatorToken).body)
            #expect(list.deviceStates == ["applied": 2, "healed": 1])
        }
    }
}
