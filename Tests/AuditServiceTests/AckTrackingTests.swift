import Foundation
import RescindCrypto
import RescindPostgres
import RescindProtocol
import Testing

@testable import AuditService

/// A revocation is complete exactly when its last expected device acks; missing,
/// late and failed acks are reported; the state lives in PostgreSQL.
@Suite struct AckTrackingTests {
    @Test func completesExactlyWhenTheLastDeviceAcks() async throws {
        try await AuditTestBed.with { bed in
            let emma = TestFamily()
            let adultB = UUID(), adultC = UUID()
            let devices = [
                TestFamily.Device(userID: emma.ownerUserID), TestFamily.Device(userID: adultB),
                TestFamily.Device(userID: adultC),
            ]
            let revocation = emma.revocation(of: adultC, devices: devices)
            try await bed.publish(revocation)
            try await bed.eventually("tracked") { try await bed.deviceStates(revocation.eventID).count == 3 }

            try await bed.publish(TestFamily.ack(devices[2], for: revocation), signedBy: devices[2].key)
            try await bed.publish(TestFamily.ack(devices[0], for: revocation, outcome: .alreadyApplied), signedBy: devices[0].key)
            try await bed.eventually("two acks") {
                try await bed.deviceStates(revocation.eventID).values.filter { $0 != "pending" }.count == 2
            }
            #expect(try await bed.count("SELECT count(*) FROM revocations WHERE completed_at IS NOT NULL") == 0)
            #expect(try await bed.count("SELECT count(*) FROM notification_outbox") == 0)

            try await Task.sleep(for: .milliseconds(50))
            try await bed.publish(TestFamily.ack(devices[1], for: revocation), signedBy: devices[1].key)
            let completed = try #require(try await bed.notifications(count: 1).first)
            #expect(completed.kind == .revocationCompleted)
            #expect(completed.eventID == revocation.eventID)
            #expect(completed.familyMemberID == emma.familyMemberID)
            let took = try #require(completed.commitToLastAckMs)
            #expect(took >= 50 && took < 20_000)
            #expect(completed.devices?.count == 3)
            #expect(completed.devices?.first { $0.deviceID == devices[0].id }?.state == "already_applied")
            #expect(completed.devices?.allSatisfy { !$0.late } == true)

            let stored = try await bed.withConnection { connection in
                try await connection.query(
                    "SELECT commit_to_last_ack_ms FROM revocations WHERE event_id = \(revocation.eventID) AND completed_at IS NOT NULL"
                ).first?.decode(Int.self, column: 0)
            }
            #expect(stored == took)
            #expect(try await bed.count("SELECT count(*) FROM audit_log WHERE event_type = 'revocation_completed'") == 1)
            // The histogram saw it.
            let metrics = String(decoding: try await bed.get("/metrics").body, as: UTF8.self)
            #expect(metrics.contains("rescind_audit_commit_to_last_ack_seconds_count 1"))
        }
    }

    /// A device told to rotate whose user a later revocation removed erased instead: it holds no
    /// key (version 0) and answers the rotation `already_applied` (or `healed`). That completes it;
    /// an `applied` rotation below the new version is still refused (found by `rescind-dev chaos`).
    @Test func aRotationAnsweredDoneByADeviceErasedSinceCompletes() async throws {
        try await AuditTestBed.with { bed in
            let emma = TestFamily()
            let adultB = UUID(), adultC = UUID()
            let phone = TestFamily.Device(userID: adultB), tablet = TestFamily.Device(userID: adultB)
            let revocation = emma.revocation(of: adultC, devices: [phone, tablet])
            try await bed.publish(revocation)
            try await bed.eventually("tracked") { try await bed.deviceStates(revocation.eventID).count == 2 }

            var contradicting = TestFamily.ack(phone, for: revocation)
            contradicting.fmkVersion = 0
            try await bed.publish(contradicting, signedBy: phone.key)
            try await bed.eventually("the contradicting ack refused") {
                try await bed.count("SELECT count(*) FROM rejected_messages WHERE reason = 'mismatched_ack'") == 1
            }
            var erased = TestFamily.ack(phone, for: revocation, outcome: .alreadyApplied)
            erased.fmkVersion = 0
            try await bed.publish(erased, signedBy: phone.key)
            var healed = TestFamily.ack(tablet, for: revocation, outcome: .healed)
            healed.fmkVersion = 0
            try await bed.publish(healed, signedBy: tablet.key)
            // The refusal's `message_rejected`, then the completion.
            let completed = try #require(try await bed.notifications(count: 2).first { $0.kind == .revocationCompleted })
            #expect(completed.eventID == revocation.eventID)
            #expect(try await bed.deviceStates(revocation.eventID) == [phone.id: "already_applied", tablet.id: "healed"])
            #expect(try await bed.count("SELECT count(*) FROM rejected_messages") == 1)
        }
    }

    @Test func aRevocationWithoutDevicesCompletesAtOnce() async throws {
        try await AuditTestBed.with { bed in
            let emma = TestFamily()
            try await bed.publish(emma.revocation(of: UUID(), devices: []))
            let completed = try await bed.notifications(count: 1)
            #expect(completed.first?.kind == .revocationCompleted)
            #expect(completed.first?.devices == [])
        }
    }

    @Test func anAckThatArrivesBeforeItsRevocationIsHeldThenApplied() async throws {
        try await AuditTestBed.with { bed in
            let emma = TestFamily()
            let adultC = UUID()
            let phone = TestFamily.Device(userID: adultC)
            let revocation = emma.revocation(of: adultC, devices: [phone])
            try await bed.publish(TestFamily.ack(phone, for: revocation), signedBy: phone.key)
            try await bed.eventually("held") { try await bed.count("SELECT count(*) FROM pending_acks") == 1 }
            #expect(try await bed.count("SELECT count(*) FROM device_acks") == 0)

            try await bed.publish(revocation)
            let completed = try await bed.notifications(count: 1)
            #expect(completed.first?.kind == .revocationCompleted)
            #expect(try await bed.deviceStates(revocation.eventID) == [phone.id: "applied"])
            #expect(try await bed.count("SELECT count(*) FROM pending_acks") == 0)
            #expect(try await bed.count("SELECT count(*) FROM rejected_messages") == 0)
        }
    }

    @Test func aHeldAckThatIsForgedIsRejectedWhenItsRevocationArrives() async throws {
        try await AuditTestBed.with { bed in
            let emma = TestFamily()
            let adultC = UUID()
            let phone = TestFamily.Device(userID: adultC)
            let revocation = emma.revocation(of: adultC, devices: [phone])
            // Claims to be the phone, signed with some other key.
            try await bed.publish(TestFamily.ack(phone, for: revocation), signedBy: Ed25519.PrivateKey())
            try await bed.eventually("held") { try await bed.count("SELECT count(*) FROM pending_acks") == 1 }
            try await bed.publish(revocation)
            let notifications = try await bed.notifications(count: 1)
            #expect(notifications.first?.kind == .messageRejected)
            #expect(notifications.first?.rejection?.reason == "bad_signature")
            #expect(notifications.first?.familyMemberID == emma.familyMemberID)
            #expect(try await bed.deviceStates(revocation.eventID) == [phone.id: "pending"])
        }
    }

    @Test func aMissingAckIsReportedOverdueOnceAndALateAckIsStillRecorded() async throws {
        try await AuditTestBed.with({ $0.tracking.ackDeadline = .seconds(1) }) { bed in
            let emma = TestFamily()
            let adultC = UUID()
            let phone = TestFamily.Device(userID: adultC), laptop = TestFamily.Device(userID: emma.ownerUserID)
            let revocation = emma.revocation(of: adultC, devices: [phone, laptop])
            // The laptop's ack goes first, so it is applied with the event, well before the deadline.
            try await bed.publish(TestFamily.ack(laptop, for: revocation), signedBy: laptop.key)
            try await bed.eventually("held") { try await bed.count("SELECT count(*) FROM pending_acks") == 1 }
            try await bed.publish(revocation)

            let overdue = try await bed.notifications(count: 1)
            #expect(overdue.first?.kind == .ackOverdue)
            #expect(overdue.first?.deviceID == phone.id)
            #expect(overdue.first?.deadline == revocation.occurredAt.addingTimeInterval(1))
            #expect(try await bed.deviceStates(revocation.eventID) == [phone.id: "overdue", laptop.id: "applied"])
            // Many scans later: still exactly one.
            try await Task.sleep(for: .milliseconds(800))
            #expect(try await bed.count("SELECT count(*) FROM notification_outbox WHERE kind = 'ack_overdue'") == 1)
            #expect(try await bed.count("SELECT count(*) FROM audit_log WHERE event_type = 'ack_overdue'") == 1)
            let metrics = String(decoding: try await bed.get("/metrics").body, as: UTF8.self)
            #expect(metrics.contains("rescind_audit_overdue_acks 1"))

            try await bed.publish(TestFamily.ack(phone, for: revocation), signedBy: phone.key)
            let all = try await bed.notifications(count: 2)
            #expect(all.last?.kind == .revocationCompleted)
            let late = try #require(all.last?.devices?.first { $0.deviceID == phone.id })
            #expect(late.state == "applied" && late.late)
        }
    }

    @Test func aFailedAckIsReportedAndARetryCompletes() async throws {
        try await AuditTestBed.with { bed in
            let emma = TestFamily()
            let adultC = UUID()
            let phone = TestFamily.Device(userID: adultC)
            let revocation = emma.revocation(of: adultC, devices: [phone])
            try await bed.publish(revocation)
            try await bed.publish(
                TestFamily.ack(phone, for: revocation, outcome: .failed, error: "disk full"), signedBy: phone.key)
            let failed = try await bed.notifications(count: 1)
            #expect(failed.first?.kind == .ackFailed)
            #expect(failed.first?.deviceID == phone.id)
            #expect(failed.first?.error == "disk full")
            #expect(try await bed.deviceStates(revocation.eventID) == [phone.id: "failed"])
            let entry = try await bed.withConnection { connection in
                try await connection.query(
                    "SELECT encrypted_details FROM audit_log WHERE event_type = 'ack_failed'"
                ).first!.decode([UInt8].self, column: 0)
            }
            let details = try CanonicalJSON.decode(
                AuditDetails.self, from: Data(try AnonymousSealedBox.open(entry, using: emma.ownerKey)))
            #expect(details.error == "disk full")

            try await bed.publish(TestFamily.ack(phone, for: revocation), signedBy: phone.key)
            let all = try await bed.notifications(count: 2)
            #expect(all.last?.kind == .revocationCompleted)
        }
    }

    @Test func restartingMidRevocationLosesNothing() async throws {
        try await AuditTestBed.with { bed in
            let emma = TestFamily()
            let adultC = UUID()
            let devices = [TestFamily.Device(userID: adultC), TestFamily.Device(userID: emma.ownerUserID)]
            let revocation = emma.revocation(of: adultC, devices: devices)
            try await bed.publish(revocation)
            try await bed.publish(TestFamily.ack(devices[0], for: revocation), signedBy: devices[0].key)
            try await bed.eventually("first ack") {
                try await bed.deviceStates(revocation.eventID)[devices[0].id] == "applied"
            }

            try await bed.restart()
            // Published while nobody consumes: picked up from the committed offset.
            try await bed.publish(TestFamily.ack(devices[1], for: revocation), signedBy: devices[1].key)
            let completed = try await bed.notifications(count: 1, timeout: .seconds(30))
            #expect(completed.first?.kind == .revocationCompleted)
            #expect(try await bed.count("SELECT count(*) FROM audit_log") == 2)
            #expect(try await bed.count("SELECT count(*) FROM device_acks") == 2)
        }
    }
}
