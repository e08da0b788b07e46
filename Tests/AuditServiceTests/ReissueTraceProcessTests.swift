import Foundation
import RescindCrypto
import RescindDevKit
import RescindKafka
import RescindProtocol
import RescindTestSupport
import Testing

/// A command re-issue of a traced revocation, on a real audit service process exporting its
/// spans (`RESCIND_OTEL_EXPORTER_OTLP_ENDPOINT`) to the test kit's collector. The test plays the
/// grant service's relay (a signed revocation event whose headers carry the owner's trace) and the
/// revoked user's own device, silent at first. The re-issue the audit service publishes starts a
/// trace of its own: its headers carry that trace, whose `command reissued` span links to the
/// revocation's trace and whose `relay publish` span is the headers' parent; the device's
/// `ack_overdue` notification carries the revocation's own trace, and so does the
/// `revocation_completed` its late ack with hostile trace headers brings. Nothing exported names an id.
@Suite(.serialized) struct ReissueTraceProcessTests {
    @Test(.timeLimit(.minutes(3)))
    func aReissueLinksToTheRevocationsTraceAndItsNotificationsCarryIt() async throws {
        let receiver = try await OTLPReceiver.start()
        let settings = [
            "RESCIND_OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint.absoluteString,
            // The device is overdue a second after the commit and re-issued a second later.
            "RESCIND_AUDIT_ACK_DEADLINE_SECONDS": "1", "RESCIND_AUDIT_REISSUE_BACKOFF_SECONDS": "1",
            "RESCIND_AUDIT_REISSUE_ATTEMPTS": "2",
        ]
        defer { Task { await receiver.stop() } }
        try await ScaleOutStack.with(grants: 1, audits: 1, auditEnvironment: settings) { stack, cluster in
            let prefix = stack.configuration.topicPrefix
            var seed = [UInt8](try Data(contentsOf: stack.configuration.work.appendingPathComponent("keys/grant.key")))
            let grantKey = try Ed25519.PrivateKey(seed: &seed)
            let family = TestFamily()
            let device = TestFamily.Device(userID: UUID())
            // The revoked user's own device: anyone who can write to device_acks.
            let event = family.revocation(of: device.userID, devices: [device])
            let revocationTrace = "0af7651916cd43dd8448eb211c80319c"
            let producer = try KafkaProducer(
                configuration: KafkaProducerConfiguration(bootstrapServers: cluster.bootstrapServers, clientID: "test-relay"),
                logger: AuditServiceHarness.logger)
            _ = try await producer.send(
                topic: prefix + Topic.revocationEvents.rawValue, key: Data(family.familyMemberID.uuidString.lowercased().utf8),
                value: try SignedMessage(schema: RevocationEvent.schema, signer: "grant-service", payload: event, key: grantKey)
                    .encoded(),
                headers: [KafkaHeader(key: "traceparent", value: Data("00-\(revocationTrace)-b7ad6b7169203331-01".utf8))])
            await producer.shutdown()

            let reissue = try await Self.first(on: prefix + Topic.deviceCommands.rawValue, cluster: cluster) {
                SignedEnvelope.claimedSchema($0.value) == CommandReissue.schema
            }
            let header = try #require(reissue.headers.last { $0.key == "traceparent" }?.value, "the re-issue carries no traceparent")
            let parts = String(decoding: header, as: UTF8.self).split(separator: "-").map(String.init)
            try #require(parts.count == 4, "traceparent \(String(decoding: header, as: UTF8.self))")
            let (reissueTrace, publishSpan) = (parts[1], parts[2])
            #expect(reissueTrace != revocationTrace, "a re-issue starts a trace of its own")

            var spans: [[String: Any]] = []
            let deadline = ContinuousClock.now + .seconds(20)
            while ContinuousClock.now < deadline {
                spans = receiver.spans
                if spans.contains(where: { $0["name"] as? String == "relay publish" && $0["spanId"] as? String == publishSpan }) { break }
                try await Task.sleep(for: .milliseconds(200))
            }
            let summary = spans.map { "\($0["service"] ?? "")/\($0["name"] ?? "") \($0["traceId"] ?? "")" }.sorted()
            let reissued = spans.filter { $0["name"] as? String == "command reissued" && $0["traceId"] as? String == reissueTrace }
            try #require(reissued.count == 1, "\(summary)")
            #expect(reissued[0]["parentSpanId"] == nil, "the re-issue's trace starts at it: \(summary)")
            let links = reissued[0]["links"] as? [[String: Any]] ?? []
            #expect(links.count == 1 && links.first?["traceId"] as? String == revocationTrace, "linked to \(links)")
            let published = spans.filter { $0["spanId"] as? String == publishSpan }
            #expect(
                published.count == 1 && published.first?["name"] as? String == "relay publish"
                    && published.first?["parentSpanId"] as? String == reissued[0]["spanId"] as? String,
                "\(summary)")
            // The event was recorded in the owner's trace, under the relay's span.
            #expect(
                spans.contains {
                    $0["name"] as? String == "revocation event recorded" && $0["traceId"] as? String == revocationTrace
                        && $0["parentSpanId"] as? String == "b7ad6b7169203331"
                }, "\(summary)")
            // The device's `ack_overdue` goes out on audit_notifications in the revocation's own
            // trace (no message concluded it: the deadline did), under the span its event was recorded in.
            let overdue = try await Self.first(on: prefix + Topic.auditNotifications.rawValue, cluster: cluster) { message in
                guard message.value != nil else { return false }
                return Self.notification(message)?.kind == .ackOverdue
            }
            let overdueHeader = overdue.headers.last { $0.key == "traceparent" }?.value.map { String(decoding: $0, as: UTF8.self) }
            #expect(overdueHeader?.split(separator: "-").dropFirst().first.map(String.init) == revocationTrace, "\(overdueHeader ?? "none")")

            // The device answers at last, with hostile trace headers: an upper-case traceparent
            // (malformed: the ack is handled untraced) and a tracestate of 4,000 characters with a
            // line break. The ack is taken (only it can complete the revocation: it was not
            // quarantined), and `revocation_completed` goes out in the revocation's trace with no
            // tracestate at all.
            let hostile = try KafkaProducer(
                configuration: KafkaProducerConfiguration(bootstrapServers: cluster.bootstrapServers, clientID: "test-device"),
                logger: AuditServiceHarness.logger)
            let ack = TestFamily.ack(device, for: event)
            _ = try await hostile.send(
                topic: prefix + Topic.deviceAcks.rawValue, key: Data(device.id.uuidString.lowercased().utf8),
                value: try SignedMessage(
                    schema: DeviceAck.schema, signer: "device:\(device.id.uuidString.lowercased())", payload: ack, key: device.key
                ).encoded(),
                headers: [
                    KafkaHeader(key: "traceparent", value: Data("00-\(revocationTrace.uppercased())-B7AD6B7169203331-01".utf8)),
                    KafkaHeader(key: "tracestate", value: Data(("rojo=1\r\n" + String(repeating: "x", count: 4000)).utf8)),
                ])
            await hostile.shutdown()
            let completed = try await Self.first(on: prefix + Topic.auditNotifications.rawValue, cluster: cluster) { message in
                Self.notification(message)?.kind == .revocationCompleted
            }
            let completedHeaders = Dictionary(completed.headers.map { ($0.key, $0.value.map { String(decoding: $0, as: UTF8.self) }) }) { $1 }
            #expect(
                completedHeaders["traceparent"]??.split(separator: "-").dropFirst().first.map(String.init) == revocationTrace,
                "\(completedHeaders)")
            #expect(completedHeaders["tracestate"] == nil, "\(completedHeaders)")

            for body in receiver.rawBodies {
                #expect(body.firstMatch(of: /[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}/) == nil, "an id in \(body.prefix(1000))")
            }
        }
    }

    /// The audit notification `message` carries, if it is one.
    static func notification(_ message: KafkaMessage) -> AuditNotification? {
        message.value.flatMap { try? SignedMessage<AuditNotification>.decode($0, schema: AuditNotification.schema).payload }
    }

    /// The first message on `topic` that `matches`, read from the beginning.
    static func first(on topic: String, cluster: DevelopmentCluster, where matches: (KafkaMessage) -> Bool) async throws -> KafkaMessage {
        let consumer = try KafkaConsumer(
            configuration: KafkaConsumerConfiguration(bootstrapServers: cluster.bootstrapServers, clientID: "test-device"),
            subscription: .partitions(
                (0..<ScaleOutStack.partitions).map { KafkaPartitionAssignment(topic: topic, partition: $0, start: .beginning) }),
            logger: AuditServiceHarness.logger)
        defer { Task { await consumer.close() } }
        for try await message in consumer.messages where matches(message) {
            return message
        }
        throw CancellationError()
    }
}
