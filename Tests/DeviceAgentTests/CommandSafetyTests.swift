import Foundation
import RescindClient
import RescindCrypto
import RescindProtocol
import RescindTestSupport
import Testing

@testable import DeviceAgent

@Suite("Forged, misaddressed, stale and replayed commands", .serialized)
struct CommandSafetyTests {
    @Test("only genuine commands for this device count; stale and replayed ones are already_applied and erase nothing")
    func hostileCommands() async throws {
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

            func command(_ action: DeviceAction, version: Int, to deviceID: UUID? = nil) -> DeviceCommand {
                DeviceCommand(
                    commandID: UUID(), eventID: UUID(), deviceID: deviceID ?? device.deviceID, action: action,
                    familyMemberID: member.id, newFMKVersion: version, issuedAt: Date())
            }
            let serviceKey = try AgentTestKit.serviceSigningKey(service)
            func signed(_ command: DeviceCommand, key: Ed25519.PrivateKey, signer: String = "grant-service") throws -> Data {
                try SignedMessage(schema: DeviceCommand.schema, signer: signer, payload: command, key: key).encoded()
            }

            // Forged (another key), unsigned, wrong signer, misaddressed: rejected, never acted on.
            try await AgentTestKit.publishCommand(service, key: device.deviceID, value: try signed(command(.secureDeletion, version: 9), key: Ed25519.PrivateKey()))
            var unsigned = try SignedMessage(schema: DeviceCommand.schema, signer: "grant-service", payload: command(.secureDeletion, version: 9), key: serviceKey)
            unsigned.signature = Data()
            try await AgentTestKit.publishCommand(service, key: device.deviceID, value: try unsigned.encoded())
            try await AgentTestKit.publishCommand(service, key: device.deviceID, value: try signed(command(.secureDeletion, version: 9), key: serviceKey, signer: "audit-service"))
            try await AgentTestKit.publishCommand(service, key: device.deviceID, value: try signed(command(.secureDeletion, version: 9, to: UUID()), key: serviceKey))
            try await AgentTestKit.publishCommand(service, key: device.deviceID, value: Data("not even json".utf8))
            // For another device entirely: ignored.
            try await AgentTestKit.publishCommand(service, key: UUID(), value: try signed(command(.secureDeletion, version: 9), key: serviceKey))

            // Genuine but stale: an erasure at the version this device already holds (access
            // granted after it) and a rotation to it. Both already_applied.
            let staleErasure = try signed(command(.secureDeletion, version: 1), key: serviceKey)
            try await AgentTestKit.publishCommand(service, key: device.deviceID, value: staleErasure)
            try await AgentTestKit.publishCommand(service, key: device.deviceID, value: try signed(command(.fmkRotation, version: 1), key: serviceKey))
            try await AgentTestKit.eventually("two acks") { try await running.agent.status().sentAcks == 2 }
            // Replay of a completed command (its offset long committed): already_applied again.
            try await AgentTestKit.publishCommand(service, key: device.deviceID, value: staleErasure)
            try await AgentTestKit.eventually("replay answered") { try await running.agent.status().sentAcks == 3 }
            await running.stop()

            let status = try await running.agent.status()
            #expect(status.counters["rejected_bad_signature"] == 2)
            #expect(status.counters["rejected_unknown_signer"] == 1)
            #expect(status.counters["rejected_misaddressed"] == 1)
            #expect(status.counters["rejected_malformed"] == 1)
            #expect(status.familyMembers.map(\.status) == ["active"])
            #expect(status.familyMembers.map(\.fmkVersion) == [1])
            #expect(try await running.agent.plaintexts(of: member.id) == member.records)

            let acks = try await AgentTestKit.acks(service, from: device)
            #expect(acks.count == 3)
            #expect(acks.allSatisfy { $0.outcome == .alreadyApplied && $0.fmkVersion == 1 && $0.recordsProcessed == 0 })
            #expect(acks.filter { $0.action == .secureDeletion }.count == 2)
        }
    }
}
