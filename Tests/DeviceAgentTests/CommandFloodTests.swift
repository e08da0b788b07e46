import Foundation
import RescindCrypto
import RescindKafka
import RescindProtocol
import RescindTestSupport
import Testing

@testable import DeviceAgent

/// The adversary: a writer on `device_commands` with no key, flooding one device's key with
/// junk ahead of that device's genuine command (every message keyed to the device is the
/// agent's to judge, in partition order). Half the junk is well-formed commands signed by a
/// stranger (the costliest rejection: decoded and verified), half 256 bytes of garbage (the development broker keeps only a few MB per partition). Promise:
/// the genuine revocation after the flood is carried out promptly. Prints the figure
/// (`RESCIND_FLOOD_MESSAGES`, 2,000 by default) recorded in docs/reliability.md.
@Suite("A flood keyed to one device", .serialized)
struct CommandFloodTests {
    static let junk = ProcessInfo.processInfo.environment["RESCIND_FLOOD_MESSAGES"].flatMap(Int.init) ?? 2_000

    @Test("junk keyed to a device ahead of its genuine command: the command is applied within seconds, every junk message counted")
    func floodAheadOfAGenuineCommand() async throws {
        try await GrantServiceHarness.with { service in
            let owner = try await service.user("Adult A")
            let grantee = try await service.user("Adult B")
            let calm = try await AgentTestKit.familyMember(ownedBy: owner, records: ["lab result"])
            let flooded = try await AgentTestKit.familyMember(ownedBy: owner, records: ["prescription"])
            try await owner.grant(calm.id, to: grantee.keys.userID)
            try await owner.grant(flooded.id, to: grantee.keys.userID)
            let device = try await AgentTestKit.enrol(grantee, on: service)
            defer { device.directory.remove() }
            let running = RunningAgent(try await device.open())
            func revoked(_ id: UUID) async throws -> Bool {
                try await running.agent.status().familyMembers.first { $0.familyMemberID == id }?.status == "revoked"
            }
            func rejected() async throws -> Int {
                try await running.agent.status().counters.filter { $0.key.hasPrefix("rejected_") }.values.reduce(0, +)
            }
            try await AgentTestKit.eventually("initial sync") { try await running.agent.status().familyMembers.count == 2 }

            let producer = try KafkaProducer(
                configuration: KafkaProducerConfiguration(bootstrapServers: service.bootstrapServers, clientID: "test-flood"),
                logger: AgentTestKit.logger)
            let topic = service.topicPrefix + Topic.deviceCommands.rawValue
            let key = Data(device.deviceID.uuidString.lowercased().utf8)
            // The agent consumes once one junk message is counted.
            _ = try await producer.send(topic: topic, key: key, value: Data("junk".utf8))
            try await AgentTestKit.eventually("the agent consuming") { try await rejected() == 1 }

            // Baseline: a revocation with nothing ahead of it.
            var start = ContinuousClock.now
            _ = try await owner.revoke(calm.id, user: grantee.keys.userID, reason: "baseline")
            try await AgentTestKit.eventually("the baseline erasure") { try await revoked(calm.id) }
            let baseline = start.duration(to: .now)

            let stranger = Ed25519.PrivateKey()
            var generator = SystemRandomNumberGenerator()
            let messages = try (0..<Self.junk).map { index in
                let value: Data
                if index % 2 == 0 {
                    value = try SignedMessage(
                        schema: DeviceCommand.schema, signer: "grant-service",
                        payload: DeviceCommand(
                            commandID: UUID(), eventID: UUID(), deviceID: device.deviceID, action: .secureDeletion,
                            familyMemberID: flooded.id, newFMKVersion: 9, issuedAt: Date()),
                        key: stranger
                    ).encoded()
                } else {
                    value = Data((0..<256).map { _ in UInt8.random(in: 0...255, using: &generator) })
                }
                return KafkaProducerMessage(topic: topic, key: key, value: value)
            }
            for result in await producer.send(messages) { _ = try result.get() }
            await producer.shutdown()

            start = ContinuousClock.now
            _ = try await owner.revoke(flooded.id, user: grantee.keys.userID, reason: "behind a flood")
            try await AgentTestKit.eventually("the erasure behind the flood", timeout: .seconds(180)) { try await revoked(flooded.id) }
            let behindFlood = start.duration(to: .now)
            print(
                "FIGURE command flood: \(Self.junk) junk messages keyed to the device ahead of its command; "
                    + "revocation to erasure \(behindFlood) (baseline \(baseline)); "
                    + "per junk message \((behindFlood - baseline) / Self.junk)")
            try await AgentTestKit.eventually("every junk message counted") { try await rejected() == Self.junk + 1 }
            #expect(behindFlood < baseline + .seconds(10))
            await running.stop()
        }
    }
}
