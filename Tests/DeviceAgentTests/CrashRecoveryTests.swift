import Foundation
import RescindClient
import RescindCrypto
import RescindDevKit
import RescindProtocol
import RescindTestSupport
import Testing

@testable import DeviceAgent

/// Crashes are simulated by a fault that ends the agent's service group at a chosen point
/// (the process would die there); the agent is then reopened on the same data directory.
@Suite("Crash safety: the agent converges with exactly one effect and one ack", .serialized)
struct CrashRecoveryTests {
    struct InjectedCrash: Error {}

    /// The revocation scenario on a fresh grant service, both devices' caches filled by one
    /// self-heal pass (so the agents under test start with the family member at v1).
    func withScenario(_ body: (GrantServiceHarness, RevocationScenario) async throws -> Void) async throws {
        try await RevocationScenario.with(records: ["note 1", "note 2", "note 3"]) { service, s in
            for device in [s.kept, s.revoked] { try await device.open().selfHeal() }
            try await body(service, s)
        }
    }

    /// Runs `device`'s agent with `faults` and without its self-heal service, then revokes.
    ///
    /// The revocation must reach the device as a command, through the code path the fault is
    /// in. A running agent self-heals at start: had that pass asked the grant service after
    /// the revocation committed, it would have erased (403) or rotated (newer version) by
    /// itself, outside the command's transaction, and the command would have found nothing
    /// to do. The restarted agents keep self-heal: they finish the inbox before it runs.
    /// No wait for the consumer group: a new group reads the commands topic from the start.
    func runThenRevoke(_ device: AgentTestKit.Device, faults: AgentFaults, in s: RevocationScenario) async throws -> RunningAgent {
        let running = RunningAgent(try await device.open(faults: AgentFaultPlans.withoutSelfHeal(faults)))
        try await s.revoke()
        return running
    }

    @Test("a crash after the inbox commit and before the offset commit: redelivery is recognised, one ack")
    func crashBeforeOffsetCommit() async throws {
        try await withScenario { service, s in
            let faults = AgentFaultPlans.crashBeforeOffsetCommit(throwing: InjectedCrash())
            let first = try await runThenRevoke(s.kept, faults: faults, in: s)
            #expect(await first.ended(timeout: .seconds(90)) is InjectedCrash)
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
            let acks = try await AgentTestKit.acks(service, from: s.kept, atLeast: 1)
            #expect(acks.count == 1)
            #expect(acks.first?.outcome == .applied && acks.first?.fmkVersion == 2 && acks.first?.recordsProcessed == 3)
            #expect(try await second.agent.plaintexts(of: s.member.id) == s.member.records)
        }
    }

    @Test("a crash inside the erasure transaction leaves the old state whole; the restart erases once and acks once")
    func crashInsideErasure() async throws {
        try await withScenario { service, s in
            let faults = AgentFaultPlans.crashInsideCommandTransaction()
            let first = try await runThenRevoke(s.revoked, faults: faults, in: s)
            let error = await first.ended(timeout: .seconds(90))
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
            let acks = try await AgentTestKit.acks(service, from: s.revoked, atLeast: 1)
            #expect(acks.map(\.outcome) == [.applied])
            #expect(acks.first?.action == .secureDeletion && acks.first?.recordsProcessed == 3)
        }
    }

    @Test("acks recorded but never published (crash before sending) are sent after the restart, once")
    func owedAcksSurviveRestart() async throws {
        try await withScenario { service, s in
            let faults = AgentFaultPlans.acksNeverPublished()
            let first = try await runThenRevoke(s.revoked, faults: faults, in: s)
            try await AgentTestKit.eventually("erased") { try await first.agent.status().owedAcks == 1 }
            await first.stop()
            #expect(try await AgentTestKit.acks(service, from: s.revoked, for: .seconds(1)).isEmpty)

            let second = RunningAgent(try await s.revoked.open())
            try await AgentTestKit.eventually("owed ack sent") { try await second.agent.status().sentAcks == 1 }
            try await Task.sleep(for: .seconds(1))
            await second.stop()
            let acks = try await AgentTestKit.acks(service, from: s.revoked, atLeast: 1)
            #expect(acks.map(\.outcome) == [.applied])
        }
    }
}
