import Foundation
import RescindClient
import RescindCrypto
import RescindProtocol
import RescindTestSupport
import Testing

@testable import DeviceAgent

@Suite("Offline devices heal by version check", .serialized)
struct OfflineHealingTests {
    @Test("devices that never saw the commands (topic beyond retention) rotate or erase on start")
    func healOnStart() async throws {
        let records = ["MRI scan: unmistakable-plaintext-1", "report: unmistakable-plaintext-2"]
        try await RevocationScenario.with(records: records) { service, s in
            let (owner, member, kept, revoked) = (s.owner, s.member, s.kept, s.revoked)
            let ownerDevice = try await AgentTestKit.enrol(owner, on: service, name: "owner-agent")
            defer { ownerDevice.directory.remove() }
            for device in [kept, revoked, ownerDevice] { try await device.open().selfHeal() }

            // Both devices are offline while the revocation (and a later record) happens.
            try await s.revoke()
            let (fmk, version) = try await owner.currentFMK(member.id)
            let added = try await owner.putRecord(member.id, plaintext: Array("after revocation".utf8), fmk: fmk, version: version)

            // They come back on a topic where the commands are gone (retention passed).
            let emptyPrefix = "expired\(UUID().uuidString.prefix(6))."
            let keptAgent = RunningAgent(try await kept.open(topicPrefix: emptyPrefix))
            let revokedAgent = RunningAgent(try await revoked.open(topicPrefix: emptyPrefix))
            try await AgentTestKit.eventually("rotation by version check") {
                try await keptAgent.agent.status().familyMembers.first?.fmkVersion == 2
            }
            try await AgentTestKit.eventually("erasure by 403") {
                try await revokedAgent.agent.status().familyMembers.first?.status == "revoked"
            }
            await keptAgent.stop()
            await revokedAgent.stop()

            var expected = member.records
            expected[added] = Array("after revocation".utf8)
            #expect(try await keptAgent.agent.plaintexts(of: member.id) == expected)
            let status = try await revokedAgent.agent.status()
            #expect(status.counters["self_heal_erasures"] == 1)
            #expect(status.familyMembers.first?.records == 2)
            let state = try #require(try await revokedAgent.agent.engine.store.familyMember(member.id))
            #expect(state.wrappedFMK == nil && state.fmkVersion == 0)
            for (_, bytes) in try revoked.directory.allFileBytes() {
                #expect(!bytes.contains(bytes: member.rawFMK))
                for plaintext in member.records.values { #expect(!bytes.contains(bytes: plaintext)) }
            }

            // The owner's own device unwraps its self-wrapped copy (master key) of v2.
            let ownerAgent = try await ownerDevice.open()
            try await ownerAgent.selfHeal()
            #expect(try await ownerAgent.plaintexts(of: member.id) == expected)

            // Granted again later: the device starts from the current state, at or above its floor.
            try await owner.grant(member.id, to: s.revokedUser.keys.userID)
            let regranted = try await revoked.open()
            try await regranted.selfHeal()
            #expect(try await regranted.plaintexts(of: member.id) == expected)
            #expect(try await regranted.status().familyMembers.map(\.status) == ["active"])
        }
    }
}
