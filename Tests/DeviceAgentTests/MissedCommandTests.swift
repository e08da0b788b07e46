import Foundation
import Logging
import RescindClient
import RescindKafka
import RescindPostgres
import RescindProtocol
import RescindTestSupport
import Synchronization
import Testing

@testable import DeviceAgent

/// An agent that never reads its revocation's command on `device_commands` (offline for longer
/// than the topic keeps it) fetches it from the grant service at check-in and answers it, so the
/// revocation completes instead of staying open for ever (the MDM model).
@Suite("Commands missed on the topic are fetched at check-in", .serialized)
struct MissedCommandTests {
    /// Moves the device's own consumer group (`rescind-agent-<id>`) past its command, as
    /// retention would: the restarted agent's consumer starts after it and never sees it.
    static func skipCommand(of device: AgentTestKit.Device, on service: GrantServiceHarness) async throws {
        var configuration = KafkaConsumerConfiguration(
            bootstrapServers: service.bootstrapServers, clientID: "test-retention",
            groupID: "rescind-agent-\(device.deviceID.uuidString.lowercased())", autoOffsetReset: .earliest)
        configuration.sessionTimeout = .seconds(3)
        let consumer = try KafkaConsumer(
            configuration: configuration,
            subscription: .group(topics: [service.topicPrefix + Topic.deviceCommands.rawValue]), logger: AgentTestKit.logger)
        let key = Data(device.deviceID.uuidString.lowercased().utf8)
        let skipped = Mutex(false)
        let reader = Task {
            for try await message in consumer.messages where message.key == key {
                try await consumer.commit(message)
                skipped.withLock { $0 = true }
                return
            }
        }
        defer { reader.cancel() }
        try await AgentTestKit.eventually("the command skipped", timeout: .seconds(30)) { skipped.withLock { $0 } }
        await consumer.close()
    }

    @Test("agents whose commands expired answer them at check-in (junk trace links and all): healed, and the revocation completes")
    func healedAtCheckIn() async throws {
        try await RevocationScenario.with(interactiveRegistrations: true, records: ["x-ray: plaintext-1", "note: plaintext-2"]) { service, s in
            try await AuditServiceHarness.with(auditing: service, { $0.tracking.scanInterval = .milliseconds(200) }) { audit in
                for device in [s.kept, s.revoked] { try await device.open().selfHeal() }

                // Both devices are offline during the revocation, and its commands expire before they return.
                let committed = try await s.owner.revoke(s.member.id, user: s.revokedUser.keys.userID)
                for device in [s.kept, s.revoked] { try await Self.skipCommand(of: device, on: service) }
                // A compromised grant service hands out junk trace links with the commands (its
                // own CHECK dropped): a link is unsigned and only ever a link, so the devices take
                // the commands in and answer them exactly as below.
                try await service.withConnection { connection in
                    try await connection.execute(
                        PostgresQuery(unsafeSQL: "ALTER TABLE device_commands DROP CONSTRAINT device_commands_traceparent_check"))
                    try await connection.execute(
                        "UPDATE device_commands SET traceparent = \(#"00-"},"x":"\#(String(repeating: "Z", count: 70_000))"#) WHERE event_id = \(committed.eventID)"
                    )
                }

                let keptAgent = RunningAgent(try await s.kept.open())
                let revokedAgent = RunningAgent(try await s.revoked.open())
                func states() async throws -> [UUID: String] {
                    try await audit.withConnection { connection in
                        Dictionary(
                            uniqueKeysWithValues: try await connection.query(
                                "SELECT device_id, state FROM revocation_devices WHERE event_id = \(committed.eventID)"
                            ).map { try $0.decode(UUID.self, String.self) })
                    }
                }
                try await AgentTestKit.eventually("the revocation completes", timeout: .seconds(60)) {
                    try await audit.withConnection { connection in
                        try await connection.query(
                            "SELECT completed_at IS NOT NULL FROM revocations WHERE event_id = \(committed.eventID)"
                        ).first?.decode(Bool.self, column: 0) == true
                    }
                }
                await keptAgent.stop()
                await revokedAgent.stop()

                // Each healed by version check at start (rotated; erased on 403), then took in the
                // command it missed from the grant service and answered it `healed`.
                #expect(try await states() == [s.kept.deviceID: "healed", s.revoked.deviceID: "healed"])
                for agent in [keptAgent, revokedAgent] {
                    let status = try await agent.agent.status()
                    #expect(status.lastCommand?.outcome == "healed" && status.pendingCommands == 0, "\(status)")
                }
                #expect(try await keptAgent.agent.status().familyMembers.first?.fmkVersion == 2)
                #expect(try await revokedAgent.agent.status().familyMembers.first?.status == "revoked")

                // Fetched once: a later pass takes nothing in again (the cursor), and owes no ack.
                let again = try await s.kept.open()
                let before = try await again.status()
                try await again.selfHeal()
                let after = try await again.status()
                #expect(after.pendingCommands == 0 && after.owedAcks == 0 && after.sentAcks == before.sentAcks)
                #expect(after.lastCommand?.commandID == before.lastCommand?.commandID)
            }
        }
    }
}
