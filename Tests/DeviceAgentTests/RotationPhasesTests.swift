import Foundation
import RescindClient
import RescindProtocol
import RescindTestSupport
import Testing

@testable import DeviceAgent

/// One FMK rotation timed by phase from the command's start to its ack handed to the producer
/// (docs/benchmarks.md, commit → last ack): the phases of a real revocation's rotation are recorded,
/// add up to the ack's own `duration_ms`, and reach the agent's metrics.
@Suite("Rotation phases", .serialized)
struct RotationPhasesTests {
    @Test("a real rotation's phases add up to the ack's duration and are exported as metrics")
    func rotationIsTimedByPhase() async throws {
        try await GrantServiceHarness.with { service in
            let owner = try await service.user("Adult A")
            let kept = try await service.user("Adult B")
            let revoked = try await service.user("Adult C")
            let member = try await AgentTestKit.familyMember(ownedBy: owner, records: (1...20).map { "visit note \($0)" })
            try await owner.grant(member.id, to: kept.keys.userID)
            try await owner.grant(member.id, to: revoked.keys.userID)
            let device = try await AgentTestKit.enrol(kept, on: service, name: "timed-agent")
            defer { device.directory.remove() }
            let running = RunningAgent(try await device.open())
            try await AgentTestKit.eventually("initial sync") {
                try await running.agent.status().familyMembers.first?.records == 20
            }

            _ = try await owner.revoke(member.id, user: revoked.keys.userID, reason: "phases")
            try await AgentTestKit.eventually("rotated and acked") {
                let status = try await running.agent.status()
                return status.familyMembers.first?.fmkVersion == 2 && status.owedAcks == 0
            }
            await running.stop()

            let ack = try #require(try await AgentTestKit.acks(service, from: device, atLeast: 1).first)
            #expect(ack.action == .fmkRotation && ack.outcome == .applied)
            let phases = try #require(running.agent.rotationPhases(ackID: ack.ackID))
            // Every phase ran and took time; the CPU of a phase is at most its wall-clock time.
            for (name, duration) in phases.named { #expect(duration > .zero, "phase \(name)") }
            #expect(phases.verifyCPU > .zero && phases.verifyCPU <= phases.verify + .milliseconds(1))
            #expect(phases.storeCPU > .zero && phases.storeCPU <= phases.store + .milliseconds(1))
            // Up to the signature they are the ack's own duration ("agent work"): the store's phase ends
            // just after the ack's duration is taken (the signature itself; a preemption at most).
            let work = phases.key + phases.download + phases.verify + phases.store
            #expect((0...10).contains(work.wholeMilliseconds - ack.durationMs), "phases \(work), ack \(ack.durationMs) ms")
            // An ack id it never signed has no phases.
            #expect(running.agent.rotationPhases(ackID: UUID()) == nil)

            let exported = running.agent.engine.metrics.registry.emitToString()
            for phase in ["key", "download", "verify", "store", "commit", "hand_off"] {
                #expect(exported.contains("rescind_agent_rotation_phase_seconds_count{phase=\"\(phase)\"}"), "\(phase)")
            }
            #expect(exported.contains("rescind_agent_rotation_cpu_seconds_count{phase=\"store\"}"))
        }
    }
}
