import Foundation
import RescindClient
import RescindProtocol
import RescindTestSupport
import Testing

@testable import DeviceAgent

#if canImport(Glibc)
import Glibc
#endif

/// Locked agents as an operator runs them: `rescind-agent run --locked`, a real revocation,
/// then SIGUSR2.
@Suite("rescind-agent locked", .serialized, .enabled(if: AgentProcess.executable != nil))
struct LockedProcessTests {
    @Test("a locked agent erases on secure_deletion at once and rotates after the unlock; each sends one signed ack")
    func erasesLockedRotatesAfterUnlock() async throws {
        let plaintexts = (1...10).map { "locked note \($0): unmistakable-plaintext-\($0)" }
        try await RevocationScenario.with(records: plaintexts) { service, s in
            let (member, kept, revoked) = (s.member, s.kept, s.revoked)

            // Filled once while unlocked, then started locked: no secret is read at start.
            var processes: [AgentProcess] = []
            for device in [kept, revoked] {
                let (status, output) = try await AgentProcess.run(["sync"], environment: AgentProcess.environment(device.configuration))
                #expect(status == 0, "\(output)")
                let file = try device.directory.write("passphrase", Data((AgentTestKit.passphrase + "\n").utf8))
                var environment = AgentProcess.environment(device.configuration, unlock: ["RESCIND_AGENT_PASSPHRASE_FILE": file])
                environment["RESCIND_AGENT_METRICS_FILE"] = device.directory.file("metrics.prom")
                environment["RESCIND_AGENT_METRICS_SECONDS"] = "1"
                let process = try AgentProcess(["run", "--locked"], environment: environment)
                try await process.waitFor("device agent starting locked")
                try await process.waitFor("lock control ready")
                try await process.waitFor("partitions assigned")
                processes.append(process)
            }
            let (keptProcess, revokedProcess) = (processes[0], processes[1])

            try await s.revoke()
            try await revokedProcess.waitFor("destroyed the FMK while locked")
            try await keptProcess.waitFor("command sealed until the unlock")

            // Locked: erased, nothing signed yet; the rotation waits sealed.
            let revokedLocked = try await AgentStatus.read(configuration: revoked.configuration)
            #expect(revokedLocked.familyMembers.map(\.status) == ["revoked"])
            #expect(revokedLocked.sealedCommands == 1 && revokedLocked.owedAcks == 0 && revokedLocked.sentAcks == 0)
            let keptLocked = try await AgentStatus.read(configuration: kept.configuration)
            #expect(keptLocked.familyMembers.map(\.fmkVersion) == [1] && keptLocked.sealedCommands == 1)
            #expect(try await AgentTestKit.acks(service, from: revoked, for: .seconds(1)).isEmpty)

            for process in processes { process.signal(SIGUSR2) }
            for process in processes { try await process.waitFor("agent unlocked") }
            try await AgentTestKit.eventually("rotation and acks after the unlock") {
                let keptStatus = try await AgentStatus.read(configuration: kept.configuration)
                let revokedStatus = try await AgentStatus.read(configuration: revoked.configuration)
                return keptStatus.familyMembers.map(\.fmkVersion) == [2] && keptStatus.sentAcks == 1 && keptStatus.owedAcks == 0
                    && revokedStatus.sentAcks == 1 && revokedStatus.owedAcks == 0 && revokedStatus.sealedCommands == 0
            }
            for process in processes {
                process.signal(SIGTERM)
                #expect(try await process.exitStatus() == 0)
            }

            // The metrics file (written last at shutdown) tells the same story.
            let revokedMetrics = try Self.metrics(revoked)
            #expect(revokedMetrics.has("rescind_agent_commands_completed_total", ["action=\"secure_deletion\"", "locked=\"true\"", "outcome=\"applied\""], value: "1"))
            #expect(revokedMetrics.has("rescind_agent_acks_published_total", [], value: "1"))
            #expect(revokedMetrics.has("rescind_agent_locked", [], value: "0.0"))
            let keptMetrics = try Self.metrics(kept)
            #expect(keptMetrics.has("rescind_agent_commands_received_total", ["action=\"fmk_rotation\"", "locked=\"true\""], value: "1"))
            #expect(keptMetrics.has("rescind_agent_commands_completed_total", ["action=\"fmk_rotation\"", "locked=\"false\"", "outcome=\"applied\""], value: "1"))
            // The lag probe ran beside the consumer: the brokers answered, its partitions are listed.
            #expect(keptMetrics.has("rescind_agent_broker_up", [], value: "1.0"))
            #expect(keptMetrics.lines.contains { $0.hasPrefix("rescind_agent_command_lag_messages{partition=") })

            let keptAcks = try await AgentTestKit.acks(service, from: kept)
            #expect(keptAcks.map(\.outcome) == [.applied])
            #expect(keptAcks.first?.action == .fmkRotation && keptAcks.first?.fmkVersion == 2)
            let revokedAcks = try await AgentTestKit.acks(service, from: revoked)
            #expect(revokedAcks.map(\.outcome) == [.applied])
            #expect(revokedAcks.first?.action == .secureDeletion && revokedAcks.first?.recordsProcessed == plaintexts.count)
            #expect(try await kept.open().plaintexts(of: member.id) == member.records)
            let denied = await #expect(throws: GrantServiceError.self) { try await revoked.session.client.wrappedKey(member.id) }
            #expect(denied?.status == 403)
        }
    }

    /// The Prometheus text a device's agent wrote.
    struct MetricsText {
        let lines: [Substring]

        /// A sample of `name` with all of `labels` and exactly `value`.
        func has(_ name: String, _ labels: [String], value: String) -> Bool {
            lines.contains { line in
                (line.hasPrefix(name + "{") || line.hasPrefix(name + " ")) && labels.allSatisfy { line.contains($0) }
                    && line.hasSuffix(" " + value)
            }
        }
    }

    static func metrics(_ device: AgentTestKit.Device) throws -> MetricsText {
        let text = try String(contentsOfFile: device.directory.file("metrics.prom"), encoding: .utf8)
        return MetricsText(lines: text.split(separator: "\n"))
    }
}
