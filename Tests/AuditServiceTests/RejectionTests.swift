import Foundation
import RescindCrypto
import RescindProtocol
import Testing

/// Unsigned, forged, malformed and unknown input is refused without stopping the
/// service: stored, counted, and reported as `message_rejected`.
@Suite struct RejectionTests {
    static func reasons(_ bed: AuditTestBed) async throws -> [String] {
        try await bed.withConnection { connection in
            try await connection.query("SELECT reason FROM rejected_messages ORDER BY rejection_id").map {
                try $0.decode(String.self, column: 0)
            }
        }
    }

    @Test func badEventsAreRejectedAndTheNextGoodOneIsStillProcessed() async throws {
        try await AuditTestBed.with { bed in
            let emma = TestFamily()
            let event = emma.accessEvent(.familyMemberCreated)
            let forged = try SignedMessage(
                schema: AccessEvent.schema, signer: "grant-service", payload: event, key: Ed25519.PrivateKey())
            var unsigned = forged
            unsigned.signature = Data()
            let valid = try SignedMessage(schema: AccessEvent.schema, signer: "grant-service", payload: event, key: bed.grantKey)
            // Signed, then given a field the signature does not cover.
            var smuggled = try JSONSerialization.jsonObject(with: try valid.encoded()) as! [String: Any]
            var payload = smuggled["payload"] as! [String: Any]
            payload["extra"] = "unsigned"
            smuggled["payload"] = payload
            let wrongSchema = try SignedMessage(
                schema: DeviceCommand.schema, signer: "grant-service", payload: event, key: bed.grantKey)

            let inputs: [(Data?, String)] = [
                (Data("not json at all".utf8), "malformed"),
                (nil, "malformed"),
                (Data(#"{"schema":"rescind.access_event.v1","payload":{}}"#.utf8), "malformed"),
                (try forged.encoded(), "bad_signature"),
                (try unsigned.encoded(), "bad_signature"),
                (try JSONSerialization.data(withJSONObject: smuggled), "unsigned_content"),
                (try wrongSchema.encoded(), "unexpected_schema"),
            ]
            for (value, _) in inputs {
                try await bed.publishRaw(.accessEvents, key: emma.familyMemberID, value: value)
            }
            // A revocation signed by someone else is refused as well.
            try await bed.publish(emma.revocation(of: UUID(), devices: []), signer: Ed25519.PrivateKey())
            try await bed.publish(event)

            try await bed.eventually("the valid event") { try await bed.count("SELECT count(*) FROM audit_log") == 1 }
            // Topics (and partitions) have no common order: compare as multisets.
            let expected = (inputs.map(\.1) + ["bad_signature"]).sorted()
            #expect(try await Self.reasons(bed).sorted() == expected)
            let notifications = try await bed.notifications(count: inputs.count + 1)
            #expect(notifications.allSatisfy { $0.kind == .messageRejected })
            #expect(notifications.compactMap { $0.rejection?.reason }.sorted() == expected)
            #expect(notifications.allSatisfy { $0.rejection?.topic.hasSuffix("_events") == true })
            #expect(try await bed.count("SELECT count(*) FROM revocations") == 0)
            let metrics = String(decoding: try await bed.get("/metrics").body, as: UTF8.self)
            #expect(metrics.contains(#"rescind_audit_messages_rejected_total{reason="malformed"} 3"#))
            #expect(metrics.contains(#"rescind_audit_messages_consumed_total{topic="access_events"} 8"#))
        }
    }

    @Test func forgedMisattributedAndUnknownAcksAreRejected() async throws {
        try await AuditTestBed.with({ $0.tracking.pendingAckLifetime = .seconds(1) }) { bed in
            let emma = TestFamily()
            let adultC = UUID()
            let phone = TestFamily.Device(userID: adultC), tablet = TestFamily.Device(userID: adultC)
            let stranger = TestFamily.Device(userID: UUID())
            let revocation = emma.revocation(of: adultC, devices: [phone, tablet])
            try await bed.publish(revocation)
            try await bed.eventually("tracked") { try await bed.deviceStates(revocation.eventID).count == 2 }

            // Forged: claims to be the phone, signed by the stranger's key.
            try await bed.publish(TestFamily.ack(phone, for: revocation), signedBy: stranger.key)
            // A device the revocation does not expect, correctly self-signed.
            try await bed.publish(TestFamily.ack(stranger, for: revocation), signedBy: stranger.key)
            // The tablet's key, but the envelope names another signer.
            try await bed.publish(
                TestFamily.ack(tablet, for: revocation), signedBy: tablet.key, signer: "device:\(phone.id.uuidString.lowercased())")
            // The phone claims to have rotated, but it was told to erase.
            var wrongAction = TestFamily.ack(phone, for: revocation)
            wrongAction.action = .fmkRotation
            wrongAction.fmkVersion = 2
            try await bed.publish(wrongAction, signedBy: phone.key)
            // Not JSON at all.
            try await bed.publishRaw(.deviceAcks, key: phone.id, value: Data([0xff, 0x00]))
            // A revocation nobody announced: held, then refused when it expires.
            let unknown = emma.revocation(of: adultC, devices: [phone])
            try await bed.publish(TestFamily.ack(phone, for: unknown), signedBy: phone.key)

            try await bed.eventually("six rejections") { try await bed.count("SELECT count(*) FROM rejected_messages") == 6 }
            #expect(try await Self.reasons(bed).sorted() == [
                "bad_signature", "malformed", "mismatched_ack", "unknown_device", "unknown_revocation", "unknown_signer",
            ])
            #expect(try await bed.deviceStates(revocation.eventID) == [phone.id: "pending", tablet.id: "pending"])
            #expect(try await bed.count("SELECT count(*) FROM device_acks") == 0)
            #expect(try await bed.count("SELECT count(*) FROM pending_acks") == 0)
            let notifications = try await bed.notifications(count: 6)
            let forged = try #require(notifications.first { $0.rejection?.reason == "bad_signature" })
            #expect(forged.kind == .messageRejected)
            #expect(forged.familyMemberID == emma.familyMemberID)
            #expect(forged.eventID == revocation.eventID && forged.deviceID == phone.id)
            let expired = try #require(notifications.first { $0.rejection?.reason == "unknown_revocation" })
            #expect(expired.eventID == unknown.eventID)

            // The real phone is still heard.
            try await bed.publish(TestFamily.ack(phone, for: revocation), signedBy: phone.key)
            try await bed.eventually("the genuine ack") {
                try await bed.deviceStates(revocation.eventID)[phone.id] == "applied"
            }
        }
    }
}
