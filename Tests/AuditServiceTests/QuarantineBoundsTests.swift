import Foundation
import RescindCrypto
import RescindKafka
import RescindPostgres
import RescindProtocol
import Testing

@testable import AuditService

/// The adversary: anyone who can write to the input topics, flooding to fill the audit
/// database's disk (issue: `rejected_messages` and `pending_acks` grew without bound). Promise:
/// what the flood makes the service keep stays within its configured bounds, every rejection is
/// still counted (per hour, topic, partition and reason, and in `/metrics`), a genuine
/// quarantine is not hidden by the flood, and a genuine ack of a known device held before its
/// revocation event still completes the revocation. Real PostgreSQL, the real consumer, the
/// development cluster over TCP.
@Suite struct QuarantineBoundsTests {
    static func metrics(_ bed: AuditTestBed) async throws -> String {
        String(decoding: try await bed.get("/metrics").body, as: UTF8.self)
    }

    static func tally(_ bed: AuditTestBed, _ reason: String) async throws -> Int {
        try await bed.count("SELECT coalesce(sum(rejected), 0)::bigint FROM rejection_tallies WHERE reason = '\(reason)'")
    }

    @Test("a writer without keys floods one partition with 8 KiB of junk past the hour's rows: bounded rows and bytes, every rejection counted, a genuine quarantine still stored and published, old ones pruned")
    func rejectionFloodStaysBounded() async throws {
        try await AuditTestBed.with({ configuration in
            configuration.quarantine.rowsPerHour = 20
            configuration.quarantine.bytesPerHour = 65_536
            configuration.quarantine.janitorInterval = .seconds(1)
        }) { bed in
            // The genuine quarantine: a validly signed event PostgreSQL refuses (stands in for any
            // value the checks did not foresee), on the flooded partition.
            try await bed.withConnection { connection in
                try await connection.execute("ALTER TABLE processed_events ADD CONSTRAINT hostile CHECK (kind <> 'access_regranted')")
            }
            let emma = TestFamily()
            let flood = 400
            var generator = SystemRandomNumberGenerator()
            let junk = (0..<flood).map { _ in
                KafkaProducerMessage(
                    topic: bed.topicPrefix + Topic.accessEvents.rawValue, key: Data(emma.familyMemberID.uuidString.lowercased().utf8),
                    value: Data((0..<8192).map { _ in UInt8.random(in: 0...255, using: &generator) }))
            }
            for result in await bed.producer.send(junk) { _ = try result.get() }
            try await bed.publish(emma.accessEvent(.accessRegranted, target: UUID()))

            try await bed.eventually("every message counted", timeout: .seconds(60)) {
                let malformed = try await Self.tally(bed, "malformed")
                let unprocessable = try await Self.tally(bed, "unprocessable")
                return malformed == flood && unprocessable == 1
            }
            // Bounded: the hour's rows of the flooded reason, and their bytes.
            #expect(try await bed.count("SELECT count(*) FROM rejected_messages WHERE reason = 'malformed'") == 20)
            #expect(try await bed.count("SELECT coalesce(sum(length(envelope)), 0)::bigint FROM rejected_messages WHERE reason = 'malformed'") <= 65_536)
            // The genuine quarantine kept its row and its body: the flood spent another reason's room.
            let genuine = try await bed.withConnection { connection in
                try await connection.query("SELECT signer, envelope FROM rejected_messages WHERE reason = 'unprocessable'").map {
                    try $0.decode(String?.self, Data?.self)
                }
            }
            #expect(genuine.count == 1 && genuine.first?.0 == "grant-service" && genuine.first?.1 != nil)
            // Published: one message_rejected per stored row, the genuine one among them.
            let notifications = try await bed.notifications(count: 21)
            #expect(notifications.contains { $0.rejection?.reason == "unprocessable" })
            #expect(try await bed.count("SELECT count(*) FROM notification_outbox WHERE kind = 'message_rejected'") == 21)
            // Counted: every rejection, those not stored apart (metrics move just after their
            // transaction commits: wait for them as for the rows).
            var metrics = ""
            try await bed.eventually("every rejection counted in /metrics") {
                metrics = try await Self.metrics(bed)
                return metrics.contains(#"rescind_audit_messages_rejected_total{reason="unprocessable"} 1"#)
                    && metrics.contains(#"rescind_audit_messages_rejected_total{reason="malformed"} \#(flood)"#)
            }
            #expect(metrics.contains(#"rescind_audit_messages_rejected_total{reason="malformed"} \#(flood)"#))
            #expect(metrics.contains(#"rescind_audit_rejections_not_stored_total{reason="malformed"} \#(flood - 20)"#))
            #expect(metrics.contains(#"rescind_audit_messages_rejected_total{reason="unprocessable"} 1"#))
            // The operator's list shows the hour's rows and every rejection's count.
            let listed = try await bed.get("/v1/rejections?limit=500", token: bed.operatorToken)
            let list = try #require(try JSONSerialization.jsonObject(with: listed.body) as? [String: Any])
            #expect((list["rejections"] as? [Any])?.count == 21)
            let counts = try #require(list["counts"] as? [[String: Any]])
            #expect(counts.contains { $0["reason"] as? String == "malformed" && $0["rejected"] as? Int == flood && $0["stored"] as? Int == 20 })
            #expect(counts.contains { $0["reason"] as? String == "unprocessable" && $0["rejected"] as? Int == 1 })

            // Retention: the flood's rows and counts are pruned once past it, the rest stays.
            try await bed.withConnection { connection in
                try await connection.execute(
                    "UPDATE rejected_messages SET received_at = received_at - interval '15 days' WHERE reason = 'malformed'")
                try await connection.execute(
                    "UPDATE rejection_tallies SET window_start = window_start - interval '15 days' WHERE reason = 'malformed'")
            }
            try await bed.eventually("the janitor prunes past retention") {
                let rows = try await bed.count("SELECT count(*) FROM rejected_messages WHERE reason = 'malformed'")
                let counted = try await Self.tally(bed, "malformed")
                return rows == 0 && counted == 0
            }
            #expect(try await bed.count("SELECT count(*) FROM rejected_messages") == 1)
            try await bed.eventually("the storage gauge") {
                metrics = try await Self.metrics(bed)
                return metrics.contains("rescind_audit_rejected_messages_stored 1")
            }
            #expect(try await bed.get("/ready").status == 200)
        }
    }

    @Test("anyone floods device_acks with acks for unseen revocations, claiming strangers' devices and a known one: the hold stays bounded and the known device's genuine held ack completes the revocation")
    func heldAckFloodStaysBounded() async throws {
        let heldMax = 40
        try await AuditTestBed.with({ configuration in
            configuration.tracking.heldAcksMax = heldMax
            configuration.tracking.heldAcksPerDevice = 4
        }) { bed in
            let emma = TestFamily()
            let adultB = UUID()
            let phone = TestFamily.Device(userID: adultB)
            // An earlier revocation listed the phone: the service knows its key.
            let earlier = emma.revocation(of: UUID(), devices: [phone])
            try await bed.publish(earlier)
            try await bed.eventually("the earlier revocation tracked") { try await bed.deviceStates(earlier.eventID).count == 1 }

            // The phone's genuine ack arrives before its revocation event: held.
            let revocation = emma.revocation(of: UUID(), devices: [phone], version: 3)
            try await bed.publish(TestFamily.ack(phone, for: revocation), signedBy: phone.key)
            try await bed.eventually("the genuine ack held, verified by the known key") {
                try await bed.count("SELECT count(*) FROM pending_acks WHERE key_verified") == 1
            }

            // The flood: acks claiming strangers' devices and unseen revocations, acks claiming the
            // phone for this revocation (signed by someone else), and oversized ones.
            let stranger = Ed25519.PrivateKey()
            var messages: [KafkaProducerMessage] = []
            let acksTopic = bed.topicPrefix + Topic.deviceAcks.rawValue
            func message(_ ack: DeviceAck, key: Ed25519.PrivateKey) throws -> KafkaProducerMessage {
                KafkaProducerMessage(
                    topic: acksTopic, key: Data(ack.deviceID.uuidString.lowercased().utf8),
                    value: try SignedMessage(
                        schema: DeviceAck.schema, signer: RevocationTracker.signer(of: ack.deviceID), payload: ack, key: key
                    ).encoded())
            }
            for _ in 0..<200 {
                let device = TestFamily.Device(userID: UUID())
                messages.append(try message(TestFamily.ack(device, for: emma.revocation(of: UUID(), devices: [device])), key: device.key))
            }
            for _ in 0..<50 { messages.append(try message(TestFamily.ack(phone, for: revocation), key: stranger)) }
            for _ in 0..<5 {
                messages.append(KafkaProducerMessage(topic: acksTopic, key: nil, value: Data(repeating: 0x20, count: 20_000)))
            }
            for result in await bed.producer.send(messages) { _ = try result.get() }

            try await bed.eventually("every flood message held, evicted or refused", timeout: .seconds(60)) {
                let evicted = try await Self.tally(bed, "held_ack_evicted")
                let held = try await bed.count("SELECT count(*) FROM pending_acks")
                return try await Self.tally(bed, "oversized") == 5 && evicted + held == 251
            }
            #expect(try await bed.count("SELECT count(*) FROM pending_acks") == heldMax)
            #expect(try await bed.count("SELECT count(*) FROM pending_acks WHERE device_id = '\(phone.id)'") <= 4)
            #expect(try await bed.count("SELECT coalesce(sum(length(envelope)), 0)::bigint FROM pending_acks") <= heldMax * HeldAckLimits.maxEnvelopeBytes)
            // Metrics move just after their transaction commits: wait for them as for the rows.
            var metrics = ""
            var evicted = 0
            try await bed.eventually("the evictions and refusals counted in /metrics") {
                metrics = try await Self.metrics(bed)
                evicted = ["device_limit", "total_limit"].compactMap { cause in
                    metrics.split(separator: "\n").first { $0.hasPrefix(#"rescind_audit_unverified_acks_evicted_total{cause="\#(cause)"}"#) }
                        .flatMap { Int($0.split(separator: " ").last ?? "") }
                }.reduce(0, +)
                return evicted >= 251 - heldMax && metrics.contains(#"rescind_audit_messages_rejected_total{reason="oversized"} 5"#)
            }
            #expect(evicted == 251 - heldMax)

            // The event arrives: the genuine ack completes it, the phone's forged ones are refused.
            try await bed.publish(revocation)
            try await bed.eventually("the revocation completed by the held genuine ack") {
                try await bed.count(
                    "SELECT count(*) FROM revocations WHERE event_id = '\(revocation.eventID)' AND completed_at IS NOT NULL") == 1
            }
            #expect(try await bed.deviceStates(revocation.eventID)[phone.id] == "applied")
            #expect(try await bed.count("SELECT count(*) FROM pending_acks WHERE device_id = '\(phone.id)'") == 0)
            #expect(try await bed.count("SELECT count(*) FROM device_acks WHERE event_id = '\(revocation.eventID)'") == 1)
        }
    }
}
