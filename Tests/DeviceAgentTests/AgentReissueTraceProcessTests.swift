import Foundation
import RescindCrypto
import RescindDevKit
import RescindKafka
import RescindProtocol
import RescindTestSupport
import Testing

/// A traced re-issue on a real `rescind-agent` process exporting its spans
/// (`RESCIND_OTEL_EXPORTER_OTLP_ENDPOINT`) to the test kit's collector. The test plays the audit
/// service's relay: after the kept device applied its revocation's command, a re-issue of it,
/// signed by the audit key the agent pins, arrives with a trace of its own in its headers (the
/// audit service starts one per re-issue, linked to the revocation's). The agent carries the
/// command out again in that trace: its `command received` span is the headers' child, its ack
/// of the attempt goes out under an `ack published` span of the same trace, and the ack's own
/// headers carry it on to the audit service. Nothing it exports names an id.
@Suite(.serialized) struct AgentReissueTraceProcessTests {
    @Test(.timeLimit(.minutes(3)))
    func aTracedReissueIsCarriedOutAndAckedInItsTrace() async throws {
        let receiver = try await OTLPReceiver.start()
        defer { Task { await receiver.stop() } }
        try await RevocationScenario.with(records: ["lab result: reissue-trace-plaintext"]) { service, s in
            // The audit service re-issues nothing of its own here (the test plays that part).
            try await AuditServiceHarness.with(auditing: service, { $0.tracking.reissueBackoff = .seconds(3600) }) { audit in
                var environment = AgentProcess.environment(s.kept.configuration)
                environment["RESCIND_AGENT_AUDIT_SERVICE_KEY"] = Data(audit.auditKey.rawRepresentation).base64EncodedString()
                environment["RESCIND_OTEL_EXPORTER_OTLP_ENDPOINT"] = receiver.endpoint.absoluteString
                let agent = try AgentProcess(["run"], environment: environment)
                defer { agent.signal(SIGKILL) }
                try await agent.waitFor("partitions assigned")
                let committed = try await s.owner.revoke(s.member.id, user: s.revokedUser.keys.userID)
                try await agent.waitFor("rotated FMK and re-keyed the cache", timeout: .seconds(60))

                var seed = [UInt8](try Data(contentsOf: URL(fileURLWithPath: audit.configuration.signingKeyFile)))
                let auditKey = try Ed25519.PrivateKey(seed: &seed)
                let reissue = CommandReissue(
                    reissueID: UUID(), eventID: committed.eventID, deviceID: s.kept.deviceID, originalCommandID: nil, attempt: 2,
                    issuedAt: Timestamp.truncated(Date()))
                let (trace, relaySpan) = ("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7")
                let producer = try KafkaProducer(
                    configuration: KafkaProducerConfiguration(bootstrapServers: service.bootstrapServers, clientID: "test-audit-relay"),
                    logger: AgentTestKit.logger)
                _ = try await producer.send(
                    topic: service.topicPrefix + Topic.deviceCommands.rawValue, key: Data(s.kept.deviceID.uuidString.lowercased().utf8),
                    value: try SignedMessage(schema: CommandReissue.schema, signer: CommandReissue.signer, payload: reissue, key: auditKey)
                        .encoded(),
                    headers: [KafkaHeader(key: "traceparent", value: Data("00-\(trace)-\(relaySpan)-01".utf8))])
                await producer.shutdown()
                try await agent.waitFor("command re-issued: carrying out the revocation's command again", timeout: .seconds(60))

                // The ack of the second attempt, on device_acks, carries the re-issue's trace.
                let key = Data(s.kept.deviceID.uuidString.lowercased().utf8)
                let secondAttempt: @Sendable (KafkaMessage) -> Bool = { message in
                    guard message.key == key, !AgentTestKit.isReceipt(message.value), let value = message.value,
                        let ack = try? SignedMessage<DeviceAck>.decode(value, schema: DeviceAck.schema).payload
                    else { return false }
                    return ack.attempt == 2
                }
                let acks = try await AgentTestKit.allMessages(service, .deviceAcks, for: .zero, until: { $0.contains(where: secondAttempt) })
                let ack = try #require(acks.first(where: secondAttempt), "no ack of the re-issued attempt")
                let header = ack.headers.last { $0.key == "traceparent" }?.value.map { String(decoding: $0, as: UTF8.self) }
                #expect(header?.split(separator: "-").dropFirst().first.map(String.init) == trace, "\(header ?? "no traceparent")")

                var spans: [[String: Any]] = []
                let deadline = ContinuousClock.now + .seconds(20)
                while ContinuousClock.now < deadline {
                    spans = receiver.spans.filter { $0["traceId"] as? String == trace }
                    if spans.contains(where: { $0["name"] as? String == "ack published" }) { break }
                    try await Task.sleep(for: .milliseconds(200))
                }
                let summary = spans.map { "\($0["service"] ?? "")/\($0["name"] ?? "") parent \($0["parentSpanId"] ?? "-")" }.sorted()
                let received = spans.filter { $0["name"] as? String == "command received" }
                #expect(received.count == 1 && received.first?["parentSpanId"] as? String == relaySpan, "\(summary)")
                #expect(spans.contains { $0["name"] as? String == "ack published" }, "\(summary)")
                #expect(spans.allSatisfy { ($0["service"] as? String)?.contains("agent") == true }, "\(summary)")
                // The ack's headers name the span it went out under, one of this trace's.
                let publishedSpan = header?.split(separator: "-").dropFirst(2).first.map(String.init)
                #expect(spans.contains { $0["spanId"] as? String == publishedSpan && $0["name"] as? String == "ack published" }, "\(summary)")

                for body in receiver.rawBodies {
                    #expect(body.firstMatch(of: /[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}/) == nil, "an id in \(body.prefix(1000))")
                }
                agent.signal(SIGTERM)
                #expect(try await agent.exitStatus() == 0)
            }
        }
    }
}
