import Foundation
import RescindClient
import RescindDevKit
import RescindKafka
import RescindPostgres
import RescindProtocol
import RescindTestSupport
import Testing

@testable import DeviceAgent

/// A real agent process killed with SIGKILL at every named step of its rotation and of its
/// erasure (`AgentStep`): `rescind-dev agent` freezes the process when a command
/// reaches the step (`RESCIND_DEV_AGENT_STOP_AT`), the test kills it there and restarts the
/// product's `rescind-agent`. The end state is the one promised whatever the step: the kept
/// device rotated to v2 with every record decrypting, the revoked one erased with no key and
/// no plaintext left, and the audit service holding exactly one applied ack from each.
@Suite(.serialized) struct StepKillTests {
    static let plaintexts = (1...12).map { "record \($0): step-kill-plaintext-\($0)" }

    @Test(.timeLimit(.minutes(3)), arguments: AgentStep.allCases)
    func killedAtStep(_ step: AgentStep) async throws {
        let devTool = try #require(AgentProcess.devExecutable, "rescind-dev is not built next to the tests")
        try await RevocationScenario.with(records: Self.plaintexts) { service, s in
            try await AuditServiceHarness.with(auditing: service) { audit in
                // The kept device rotates (every step); the revoked one erases (no `downloaded`:
                // it runs without a stop there).
                var stopped: [(AgentTestKit.Device, AgentProcess)] = []
                var unstopped: [(done: String, process: AgentProcess)] = []
                for (device, action) in [(s.kept, DeviceAction.fmkRotation), (s.revoked, .secureDeletion)] {
                    var environment = AgentProcess.environment(device.configuration)
                    environment["RESCIND_DEV_AGENT_SELF_HEAL"] = "false"
                    let stops = AgentStep.steps(of: action).contains(step)
                    if stops { environment["RESCIND_DEV_AGENT_STOP_AT"] = step.rawValue }
                    let process = try AgentProcess(["agent"], environment: environment, executable: devTool)
                    if stops {
                        stopped.append((device, process))
                    } else {
                        let done = action == .fmkRotation ? "rotated FMK and re-keyed the cache" : "cryptographically erased cached records"
                        unstopped.append((done, process))
                    }
                }
                for process in stopped.map({ $0.1 }) + unstopped.map(\.process) { try await process.waitFor("partitions assigned") }
                try await s.revoke()

                for (_, process) in stopped {
                    try await process.waitFor("stopped at step \(step.rawValue)", timeout: .seconds(60))
                    process.signal(SIGKILL)
                    #expect(try await process.exitStatus() != 0)
                }
                // The device not stopped at this step finishes its command first: stopped before it
                // even read the command, its restarted agent would heal at start and answer the
                // command `healed` (also correct, but not the one applied ack asserted below).
                for (done, process) in unstopped {
                    try await process.waitFor(done, timeout: .seconds(60))
                    process.signal(SIGTERM)
                    _ = try await process.exitStatus()
                }

                // The product's agent takes over each killed device and converges. Both start at
                // once, as they did before the kill: each device has its own consumer group, so
                // their group joins (seconds each on the development cluster) overlap.
                let restarted = try [s.kept, s.revoked].map { device in
                    (device, try AgentProcess(["run"], environment: AgentProcess.environment(device.configuration)))
                }
                for (_, process) in restarted { try await process.waitFor("partitions assigned") }
                for (device, _) in restarted {
                    try await AgentTestKit.eventually("converged after a kill at \(step.rawValue)", timeout: .seconds(60)) {
                        let status = try await AgentStatus.read(configuration: device.configuration)
                        return status.pendingCommands == 0 && status.owedAcks == 0 && status.sentAcks >= 1
                    }
                }
                for (_, process) in restarted {
                    process.signal(SIGTERM)
                    #expect(try await process.exitStatus() == 0)
                }

                // Rotated to the right version, every record decrypting.
                let kept = try await s.kept.open()
                let keptState = try #require(try await kept.engine.store.familyMember(s.member.id))
                #expect(keptState.status == .active && keptState.fmkVersion == 2)
                #expect(try await kept.plaintexts(of: s.member.id) == s.member.records)
                // Erased: no key, nothing that decrypts.
                let revoked = try await s.revoked.open()
                let revokedState = try #require(try await revoked.engine.store.familyMember(s.member.id))
                #expect(revokedState.status == .revoked && revokedState.wrappedFMK == nil)
                #expect(((try? await revoked.plaintexts(of: s.member.id)) ?? [:]).isEmpty)

                // Exactly one final ack effect per device in the audit service.
                for (device, action) in [(s.kept, "fmk_rotation"), (s.revoked, "secure_deletion")] {
                    let deviceID = device.deviceID
                    do {
                        try await AgentTestKit.eventually("the audit service recorded \(action)", timeout: .seconds(30)) {
                            try await audit.withConnection { connection in
                                try await connection.query(
                                    "SELECT count(*) FROM revocation_devices WHERE device_id = \(deviceID) AND state = 'applied'"
                                ).first!.decode(Int.self, column: 0)
                            } == 1
                        }
                    } catch {
                        // What the audit service holds for the device instead, to say why.
                        let held = try await audit.withConnection { connection in
                            try await connection.query(
                                """
                                SELECT 'device ' || action || ':' || state FROM revocation_devices WHERE device_id = \(deviceID)
                                UNION ALL SELECT 'ack ' || outcome FROM device_acks WHERE device_id = \(deviceID)
                                UNION ALL SELECT 'held ' || count(*) FROM pending_acks
                                """
                            ).map { try $0.decode(String.self, column: 0) }
                        }
                        Issue.record("after a kill at \(step.rawValue), the audit service holds for the \(action) device: \(held)")
                        throw error
                    }
                    let acks = try await audit.withConnection { connection in
                        try await connection.query(
                            "SELECT count(*) FROM device_acks WHERE device_id = \(deviceID) AND outcome NOT IN ('delivered', 'not_now')")
                            .first!.decode(Int.self, column: 0)
                    }
                    let states = try await audit.withConnection { connection in
                        try await connection.query(
                            "SELECT action || ':' || state FROM revocation_devices WHERE device_id = \(deviceID)"
                        ).map { try $0.decode(String.self, column: 0) }
                    }
                    #expect(acks == 1, "one ack from the \(action) device after a kill at \(step.rawValue)")
                    #expect(states == ["\(action):applied"])
                }
            }
        }
    }
}
