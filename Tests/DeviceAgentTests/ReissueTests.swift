import Foundation
import RescindClient
import RescindDevKit
import RescindPostgres
import RescindProtocol
import RescindTestSupport
import Testing

@testable import DeviceAgent

/// A failed ack is not final: the audit service re-issues the command (a new command id linked
/// to the original, signed by the audit service, which the agent pins) after a backoff, the agent
/// carries out the grant service's command it holds again, and the revocation completes
/// instead of staying open.
@Suite("Failed commands are re-issued", .serialized)
struct ReissueTests {
    @Test("a device whose first attempt fails: failed → reissued → applied, and the revocation completes")
    func failedThenReissuedThenApplied() async throws {
        try await RevocationScenario.with(interactiveRegistrations: true, records: ["lab result: plaintext-1", "letter: plaintext-2"]) { service, s in
            try await AuditServiceHarness.with(auditing: service, {
                $0.tracking.scanInterval = .milliseconds(200)
                $0.tracking.reissueBackoff = .milliseconds(1500)
            }) { audit in
                for device in [s.kept, s.revoked] { try await device.open().selfHeal() }
                // The command path alone (no self-heal pass to converge by itself); the kept device
                // fails the first attempt of every command.
                let pin: @Sendable (inout AgentConfiguration) -> Void = { $0.auditServiceKey = audit.auditKey }
                let keptAgent = RunningAgent(
                    try await s.kept.open(faults: AgentFaultPlans.withoutSelfHeal(AgentFaultPlans.failFirstAttempt()), configure: pin))
                let revokedAgent = RunningAgent(try await s.revoked.open(faults: AgentFaultPlans.withoutSelfHeal(), configure: pin))

                let committed = try await s.owner.revoke(s.member.id, user: s.revokedUser.keys.userID)
                try await AgentTestKit.eventually("the revocation completes", timeout: .seconds(60)) {
                    try await audit.withConnection { connection in
                        try await connection.query(
                            "SELECT completed_at IS NOT NULL FROM revocations WHERE event_id = \(committed.eventID)"
                        ).first?.decode(Bool.self, column: 0) == true
                    }
                }
                await keptAgent.stop()
                await revokedAgent.stop()

                let (state, attempts) = try await audit.withConnection { connection in
                    try await connection.query(
                        """
                        SELECT state, attempts FROM revocation_devices
                        WHERE event_id = \(committed.eventID) AND device_id = \(s.kept.deviceID)
                        """
                    ).first!.decode(String.self, Int.self)
                }
                #expect(state == "applied" && attempts == 2)
                let history = try await audit.withConnection { connection in
                    try await connection.query(
                        """
                        SELECT outcome, coalesce(attempt, 1), original_command_id IS NOT NULL FROM device_acks
                        WHERE event_id = \(committed.eventID) AND device_id = \(s.kept.deviceID) ORDER BY received_at
                        """
                    ).map { try $0.decode(String.self, Int.self, Bool.self) }
                }
                // Each attempt was stored in the inbox, and said so (a receipt), before its answer.
                let receipts = history.filter { $0.0 == "delivered" }
                #expect(receipts.map(\.1) == [1, 2] && receipts.map(\.2) == [false, true], "\(history)")
                let answers = history.filter { $0.0 != "delivered" }
                #expect(answers.map(\.0) == ["failed", "applied"], "\(history)")
                let applied = answers.first { $0.0 == "applied" }
                #expect(applied?.1 == 2 && applied?.2 == true, "the ack names the attempt and the original: \(history)")
                #expect(
                    try await audit.withConnection { connection in
                        try await connection.query(
                            "SELECT count(*) FROM command_reissues WHERE event_id = \(committed.eventID) AND device_id = \(s.kept.deviceID)"
                        ).first!.decode(Int.self, column: 0)
                    } == 1)
                // What the audit service published conforms to its schema.
                let envelope = try await audit.withConnection { connection in
                    try await connection.query(
                        "SELECT envelope FROM notification_outbox WHERE kind = 'command_reissue' AND sent_at IS NOT NULL"
                    ).first?.decode(Data.self, column: 0)
                }
                #expect(try JSONSchemaValidator.load(CommandReissue.schema).problems(try #require(envelope)).isEmpty)
                #expect(try await keptAgent.agent.status().familyMembers.first?.fmkVersion == 2)
            }
        }
    }
}
