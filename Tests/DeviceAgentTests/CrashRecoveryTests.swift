import Foundation
import RescindClient
import RescindCrypto
import RescindProtocol
import RescindTestSupport
import Testing

@testable import DeviceAgent

/// Crashes are simulated by a fault that ends the agent's service group at a chosen point
/// (the process would die there); the agent is then reopened on the same data directory.
@Suite("Crash safety: the agent converges with exactly one effect and one ack", .serialized)
struct CrashRecoveryTests {
    struct InjectedCrash: Error {}

    /// Owner, a grantee whose device rotates and a revoked user whose device erases.
    func scenario(
        _ service: GrantServiceHarness
    ) async throws -> (owner: UserSession, revokedUser: UUID, member: (id: UUID, rawFMK: [UInt8], records: [UUID: [UInt8]]), kept: AgentTestKit.Device, revoked: AgentTestKit.Device) {
        let owner = try await service.user("Adult A")
        let keptUser = try await service.user("Adult B")
        let revokedUser = try await service.user("Adult C")
        let member = try await AgentTestKit.familyMember(ownedBy: owner, records: ["note 1", "note 2", "note 3"])
        try await owner.grant(member.id, to: keptUser.keys.userID)
        try await owner.grant(member.id, to: revokedUser.keys.userID)
        let kept = try await AgentTestKit.enrol(keptUser, on: service, name: "kept")
        let revoked = try await AgentTestKit.enrol(revokedUser, on: service, name: "revoked")
        for device in [kept, revoked] { try await device.open().selfHeal() }
        return (owner, revokedUser.keys.userID, member, kept, revoked)
    }

    @Test("a crash after the inbox commit and before the offset commit: redelivery is recognised, one ack")
    func crashBeforeOffsetCommit() async throws {
        try await GrantServiceHarness.with { service in
            let s = try await scenario(service)
            defer {
                s.kept.directory.remove()
                s.revoked.directory.remove()
            }
            var faults = AgentFaults()
            faults.publishAcks = false
            faults.beforeOffsetCommit = { info in if info.commandID != nil { throw InjectedCrash() } }
            let first = RunningAgent(try await s.kept.open(faults: faults))
            try await AgentTestKit.eventually("group joined") { try await first.agent.status().familyMembers.count == 1 }
            _ = try await s.owner.revoke(s.member.id, user: s.revokedUser)
            #expect(await first.ended() is InjectedCrash)
            let crashed = try await first.agent.status()
            #expect(crashed.sentAcks == 0)

            // Restart: the inbox finishes the command (if the crash came first), the owed ack
            // goes out, the redelivered message is recognised and answered with nothing new.
            let second = RunningAgent(try await s.kept.open())
            try await AgentTestKit.eventually("converged") {
                let status = try await second.agent.status()
                return status.familyMembers.first?.fmkVersion == 2 && status.sentAcks >= 1 && status.pendingCommands == 0
            }
            try await Task.sleep(for: .seconds(1))  // room for a wrong second ack to show up
            await second.stop()
            let acks = try await AgentTestKit.acks(service, from: s.kept)
            #expect(acks.count == 1)
            #expect(acks.first?.outcome == .applied && acks.first?.fmkVersion == 2 && acks.first?.recordsProcessed == 3)
            #expect(try await second.agent.plaintexts(of: s.member.id) == s.member.records)
        }
    }

    @Test("a crash inside the erasure transaction leaves the old state whole; the restart erases once and acks once")
    func crashInsideErasure() async throws {
        try await GrantServiceHarness.with { service in
            let s = try await scenario(service)
            defer {
                s.kept.directory.remove()
                s.revoked.directory.remove()
            }
            var faults = AgentFaults()
            faults.beforeCommandCommit = { _ in throw AgentError(.injectedFault, "crash inside the transaction") }
            let first = RunningAgent(try await s.revoked.open(faults: faults))
            try await AgentTestKit.eventually("group joined") { try await first.agent.status().familyMembers.count == 1 }
            _ = try await s.owner.revoke(s.member.id, user: s.revokedUser)
            let error = await first.ended()
            #expect((error as? AgentError)?.code == .injectedFault)

            // Nothing half-erased: the FMK is still there and every record still opens.
            let state = try #require(try await first.agent.engine.store.familyMember(s.member.id))
            #expect(state.status == .active && state.fmkVersion == 1 && state.wrappedFMK != nil)
            #expect(try await first.agent.plaintexts(of: s.member.id) == s.member.records)
            #expect(try await first.agent.status().pendingCommands == 1)

            let second = RunningAgent(try await s.revoked.open())
            try await AgentTestKit.eventually("erased and acked") {
                let status = try await second.agent.status()
                return status.familyMembers.first?.status == "revoked" && status.sentAcks == 1
            }
            try await Task.sleep(for: .seconds(1))
            await second.stop()
            let acks = try await AgentTestKit.acks(service, from: s.revoked)
            #expect(acks.map(\.outcome) == [.applied])
            #expect(acks.first?.action == .secureDeletion && acks.first?.recordsProcessed == 3)
        }
    }

    @Test("acks recorded but never published (crash before sending) are sent after the restart, once")
    func owedAcksSurviveRestart() async throws {
        try await GrantServiceHarness.with { service in
            let s = try await scenario(service)
            defer {
                s.kept.directory.remove()
                s.revoked.directory.remove()
            }
            var faults = AgentFaults()
            faults.publishAcks = false
            let first = RunningAgent(try await s.revoked.open(faults: faults))
            try await AgentTestKit.eventually("group joined") { try await first.agent.status().familyMembers.count == 1 }
            _ = try await s.owner.revoke(s.member.id, user: s.revokedUser)
            try await AgentTestKit.eventually("erased") { try await first.agent.status().owedAcks == 1 }
            await first.stop()
            #expect(try await AgentTestKit.acks(service, from: s.revoked, for: .seconds(1)).isEmpty)

            let second = RunningAgent(try await s.revoked.open())
            try await AgentTestKit.eventually("owed ack sent") { try await second.agent.status().sentAcks == 1 }
            try await Task.sleep(for: .seconds(1))
            await second.stop()
            let acks = try await AgentTestKit.acks(service, from: s.revoked)
            #expect(acks.map(\.outcome) == [.applied])
        }
    }
}
