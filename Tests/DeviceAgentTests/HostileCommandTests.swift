import Foundation
import RescindCrypto
import RescindDevKit
import RescindKafka
import RescindProtocol
import RescindTestSupport
import Testing

@testable import DeviceAgent

/// The adversary: a writer on `device_commands` (no key: mutated envelopes, NUL and invalid
/// UTF-8, extreme numbers, huge strings, deep nesting, duplicate keys, wrong types, garbage,
/// hostile message keys) and, stronger, a holder of the grant service's key signing hostile
/// values. A seeded sample (`HostileEnvelopes`, replay with `RESCIND_HOSTILE_SEED`) goes to a
/// running agent through the real consumer and its SQLite store. Promise: the agent neither
/// crashes nor stalls; a genuine revocation afterwards is carried out and acknowledged.
@Suite("Hostile device commands", .serialized)
struct HostileCommandTests {
    static let samples = 200

    @Test("a sample of hostile commands neither crashes nor stalls the agent; the genuine revocation after it is applied")
    func hostileSample() async throws {
        try await GrantServiceHarness.with { service in
            let owner = try await service.user("Adult A")
            let grantee = try await service.user("Adult B")
            let member = try await AgentTestKit.familyMember(ownedBy: owner, records: ["lab result", "prescription"])
            try await owner.grant(member.id, to: grantee.keys.userID)
            let device = try await AgentTestKit.enrol(grantee, on: service)
            defer { device.directory.remove() }
            let running = RunningAgent(try await device.open())
            try await AgentTestKit.eventually("initial sync") {
                try await running.agent.status().familyMembers.first?.fmkVersion == 1
            }

            let seed = SeededGenerator.seed(fallback: 0x13_C0DE)
            // The context is drawn from the seed too, but for what the running service and agent
            // chose (the grant service's key, the family member, the device) and the clock.
            var random = SeededGenerator(seed: seed).split(0xC0_17E7)
            let stranger = HostileEnvelopes.signingKey(&random)
            let context = HostileEnvelopes.Context(
                grantKey: try AgentTestKit.serviceSigningKey(service),
                revocation: RevocationEvent(
                    eventID: random.uuid(), familyMemberID: member.id, ownerUserID: owner.keys.userID,
                    ownerAgreementPublicKey: Data(count: 32), revokedUserID: random.uuid(), revokedByUserID: owner.keys.userID,
                    newFMKVersion: 2, recordsReencrypted: 0, reason: nil, clientDurationMs: nil, occurredAt: Date(),
                    expectedDevices: [
                        .init(deviceID: random.uuid(), userID: random.uuid(), action: .fmkRotation,
                              signingPublicKey: Data(stranger.publicKey.rawRepresentation))
                    ]),
                deviceKeys: [:], commandDevice: device.deviceID)
            var generator = HostileEnvelopes(seed: seed, context: context, maxStringBytes: 100_000)
            let producer = try KafkaProducer(
                configuration: KafkaProducerConfiguration(bootstrapServers: service.bootstrapServers, clientID: "test-hostile"),
                logger: AgentTestKit.logger)
            for _ in 0..<Self.samples {
                let sample = generator.next(.deviceCommands)
                _ = try await producer.send(
                    topic: service.topicPrefix + Topic.deviceCommands.rawValue, key: sample.key, value: sample.value)
            }
            await producer.shutdown()

            let committed = try await owner.revoke(member.id, user: grantee.keys.userID, reason: "after the hostile sample")
            try await AgentTestKit.eventually("the genuine erasure (seed \(seed))") {
                try await running.agent.status().familyMembers.first { $0.familyMemberID == member.id }?.status == "revoked"
            }
            try await AgentTestKit.eventually("its ack published") { try await running.agent.status().owedAcks == 0 }
            let acks = try await AgentTestKit.acks(service, from: device)
            #expect(acks.contains { $0.eventID == committed.eventID && $0.action == .secureDeletion }, "seed \(seed)")
            // Every ack the agent signed is within the limits its consumers enforce.
            #expect(acks.allSatisfy { (try? $0.validate()) != nil }, "seed \(seed)")
            await running.stop()
        }
    }
}
