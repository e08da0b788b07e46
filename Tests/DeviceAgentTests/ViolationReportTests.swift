import Foundation
import RescindClient
import RescindCrypto
import RescindDevKit
import RescindKafka
import RescindPostgres
import RescindProtocol
import RescindTestSupport
import Testing

@testable import DeviceAgent

/// An agent's key chain violation report travels like its acks: signed with the device key,
/// queued in the agent's outbox (so it survives a broker outage or a restart), published to
/// `device_acks`, verified by the audit service with the key the revocation listed for the
/// device, and raised on `audit_notifications` as `key_chain_violation`. Real grant and audit
/// services, PostgreSQL, a Kafka cluster and the agent's own store.
@Suite(.serialized) struct ViolationReportTests {
    static func violation(_ scenario: RevocationScenario) -> KeyChainViolation {
        KeyChainViolation(
            code: .commitmentMismatch, familyMemberID: scenario.member.id, reporterUserID: scenario.keptUser.keys.userID,
            reporterDeviceID: scenario.kept.deviceID, offeredFMKVersion: 2, statementSeq: 2, verifiedSeq: 1,
            detail: "the FMK unwrapped for v2 does not match the owner's commitment\n(line two)",
            detectedAt: Timestamp.truncated(Date()))
    }

    @Test(.timeLimit(.minutes(4)))
    func aReportQueuedWhileTheAgentIsOfflineReachesTheAuditServiceSignedByTheDevice() async throws {
        try await RevocationScenario.with(records: ["one", "two"]) { service, scenario in
            var configuration = AuditServiceHarness.configuration(
                cluster: service.cluster, grantKey: nil, topicPrefix: service.topicPrefix)
            configuration.grantService.url = service.baseURL.absoluteString
            let audit = try await AuditServiceHarness.start(configuration: configuration, cluster: service.cluster)
            do {
                // The revocation lists the kept device with its key: the audit service learns it.
                // The rotation must reach the agent as a command, so the agent runs without its
                // self-heal service: a start-up pass that asks the grant service after the
                // revocation committed downloads FMK v2 by itself, and the command is then answered
                // `healed` (or `already_applied`), never `applied`.
                let agent = try await scenario.kept.open(faults: AgentFaultPlans.withoutSelfHeal())
                let running = RunningAgent(agent)
                try await scenario.revoke()
                try await AgentTestKit.eventually("the kept device's ack is tracked", timeout: .seconds(60)) {
                    try await audit.withConnection { connection in
                        try await connection.query(
                            "SELECT count(*) FROM revocation_devices WHERE device_id = \(scenario.kept.deviceID) AND state = 'applied'"
                        ).first!.decode(Int.self, column: 0) == 1
                    }
                }
                // The audit service can apply the ack before the broker's delivery report reaches
                // the agent, which marks it sent only then: stopped before that, the agent would
                // still owe it, and the outbox below would hold two acks, not just the report.
                try await AgentTestKit.eventually("the kept agent marked its ack sent", timeout: .seconds(30)) {
                    try await agent.engine.store.owedMessages().isEmpty
                }
                await running.stop()

                // Offline (no publisher running): the report is queued, and the call returns at once.
                let offline = try await scenario.kept.open()
                let violation = Self.violation(scenario)
                let clock = ContinuousClock()
                let elapsed = await clock.measure { await offline.engine.violationReporter.report(violation) }
                #expect(elapsed < .seconds(2))
                #expect(try await offline.engine.store.owedAcks().count == 1)

                // Back online: published, verified with the device key, stored and announced.
                let online = RunningAgent(offline)
                try await AgentTestKit.eventually("the report is stored", timeout: .seconds(60)) {
                    try await audit.withConnection { connection in
                        try await connection.query(
                            "SELECT count(*) FROM key_chain_violations WHERE report_id = \(violation.reportID) AND verification = 'device_signature'"
                        ).first!.decode(Int.self, column: 0) == 1
                    }
                }
                await online.stop()
                let detail = try await audit.withConnection { connection in
                    try await connection.query(
                        "SELECT detail FROM key_chain_violations WHERE report_id = \(violation.reportID)"
                    ).first!.decode(String.self, column: 0)
                }
                #expect(detail == "the FMK unwrapped for v2 does not match the owner's commitment\u{FFFD}(line two)")
                let logged = try await audit.withConnection { connection in
                    try await connection.query(
                        "SELECT count(*) FROM audit_log WHERE event_type = 'key_chain_violation' AND source_id = \(violation.reportID)"
                    ).first!.decode(Int.self, column: 0)
                }
                #expect(logged == 1)

                let reportKey = Data(scenario.kept.deviceID.uuidString.lowercased().utf8)
                let onAcks = try await AgentTestKit.allMessages(service, .deviceAcks, for: .milliseconds(200)) {
                    $0.contains { $0.key == reportKey && InboundSchema.of($0.value) == KeyChainViolation.schema }
                }.filter { $0.key == reportKey && InboundSchema.of($0.value) == KeyChainViolation.schema }
                #expect(onAcks.count == 1)
                let signed = try SignedMessage<KeyChainViolation>.verified(
                    from: onAcks[0].value ?? Data(), schema: KeyChainViolation.schema, key: scenario.kept.deviceKey.publicKey)
                #expect(signed.payload.reportID == violation.reportID)

                let notifications = try await AgentTestKit.allMessages(service, .auditNotifications, for: .milliseconds(200)) {
                    $0.contains { InboundSchema.kind($0.value) == "key_chain_violation" }
                }
                let announced = try notifications.compactMap { message -> AuditNotification? in
                    let verified = try SignedMessage<AuditNotification>.verified(
                        from: message.value ?? Data(), schema: AuditNotification.schema, key: audit.auditKey)
                    return verified.payload.kind == .keyChainViolation ? verified.payload : nil
                }
                #expect(announced.count == 1)
                #expect(announced.first?.violation?.reportID == violation.reportID)
                #expect(announced.first?.reporterVerification == .deviceSignature)
                await audit.stop()
                await audit.dropState()
            } catch {
                await audit.stop()
                await audit.dropState()
                throw error
            }
        }
    }
}

/// Peeks at an envelope's schema or payload kind without trusting it.
enum InboundSchema {
    static func object(_ data: Data?) -> [String: Any]? {
        data.flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
    }

    static func of(_ data: Data?) -> String? { object(data)?["schema"] as? String }

    static func kind(_ data: Data?) -> String? { (object(data)?["payload"] as? [String: Any])?["kind"] as? String }
}
