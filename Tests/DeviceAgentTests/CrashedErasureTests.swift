import Foundation
import RescindClient
import RescindDevKit
import RescindPostgres
import RescindProtocol
import RescindTestSupport
import Testing

@testable import DeviceAgent

/// Adversaries 5 and 1 together: the agent killed (SIGKILL) between an erasure's commit and
/// the checkpoint that truncates the write-ahead log (`AgentStep.afterEraseCommitBeforeScrub`),
/// then a thief reading every file of the crashed device's data directory. The erasure
/// commits on the rollback journal (`AgentStore.write(erasing:)`), so the erased ciphertext
/// and wrapped FMK are in no file even there; no ack left before the kill, and the restarted
/// agent publishes exactly one.
@Suite(.serialized) struct CrashedErasureTests {
    static let plaintexts = (1...12).map { "record \($0): crashed-erasure-plaintext-\($0)" }

    @Test(.timeLimit(.minutes(3)))
    func killedBetweenEraseCommitAndScrub() async throws {
        let devTool = try #require(AgentProcess.devExecutable, "rescind-dev is not built next to the tests")
        let step = AgentStep.afterEraseCommitBeforeScrub
        try await RevocationScenario.with(records: Self.plaintexts) { service, s in
            try await AuditServiceHarness.with(auditing: service) { audit in
                // The revoked device's cache as the erasure will find it, filled by the product's
                // agent (its start-up sync) and read once it stopped, through a store of the test's
                // own that is closed again before the next agent starts (an open connection would
                // keep the erasure off the rollback journal, see `AgentStore.leaveWriteAheadLog`).
                let syncing = try AgentProcess(["run"], environment: AgentProcess.environment(s.revoked.configuration))
                try await AgentTestKit.eventually("the revoked device cached the family member", timeout: .seconds(60)) {
                    let status = try await AgentStatus.read(configuration: s.revoked.configuration)
                    return status.familyMembers.first { $0.familyMemberID == s.member.id }?.records == Self.plaintexts.count
                }
                syncing.signal(SIGTERM)
                #expect(try await syncing.exitStatus() == 0)
                func cachedBytes() async throws -> (ciphertexts: [[UInt8]], wrappedFMK: [UInt8]) {
                    let store = try AgentStore(path: s.revoked.configuration.databasePath)
                    let records = try await store.records(of: s.member.id)
                    let wrapped = try #require(try await store.familyMember(s.member.id)?.wrappedFMK)
                    return (records.map { [UInt8]($0.ciphertext) }, [UInt8](wrapped))
                }
                let (ciphertexts, wrappedFMK) = try await cachedBytes()
                #expect(ciphertexts.count == Self.plaintexts.count)
                let deviceID = s.revoked.deviceID
                func appliedAcks() async throws -> Int {
                    try await audit.withConnection { connection in
                        try await connection.query(
                            "SELECT count(*) FROM device_acks WHERE device_id = \(deviceID) AND outcome NOT IN ('delivered', 'not_now')"
                        ).first!.decode(Int.self, column: 0)
                    }
                }

                var environment = AgentProcess.environment(s.revoked.configuration)
                environment["RESCIND_DEV_AGENT_SELF_HEAL"] = "false"
                environment["RESCIND_DEV_AGENT_STOP_AT"] = step.rawValue
                let process = try AgentProcess(["agent"], environment: environment, executable: devTool)
                try await process.waitFor("partitions assigned")
                try await s.revoke()
                try await process.waitFor("stopped at step \(step.rawValue)", timeout: .seconds(60))
                process.signal(SIGKILL)
                #expect(try await process.exitStatus() != 0)

                // No ack left: it is published only after the scrub, and the process died before.
                try await Task.sleep(for: .seconds(2))
                #expect(try await appliedAcks() == 0, "an ack left before the erasure was scrubbed")

                // The thief's view of the crashed device: every file of its data directory.
                let crashed = try Self.scan(s.revoked.directory, ciphertexts: ciphertexts, wrappedFMK: wrappedFMK)
                print("crashed-erasure scan before restart: files \(crashed.files); erased bytes found: \(crashed.found)")
                #expect(crashed.files.contains { $0.hasSuffix("cache.sqlite") })
                #expect(crashed.found.isEmpty, "erased bytes in the crashed device's files: \(crashed.found)")

                // The product's agent restarts, finishes the erasure and acks it once.
                let restarted = try AgentProcess(["run"], environment: AgentProcess.environment(s.revoked.configuration))
                try await restarted.waitFor("partitions assigned")
                try await AgentTestKit.eventually("the erasure acked after the restart", timeout: .seconds(60)) {
                    let status = try await AgentStatus.read(configuration: s.revoked.configuration)
                    return status.pendingCommands == 0 && status.owedAcks == 0 && status.sentAcks >= 1
                }
                restarted.signal(SIGTERM)
                #expect(try await restarted.exitStatus() == 0)

                let after = try Self.scan(s.revoked.directory, ciphertexts: ciphertexts, wrappedFMK: wrappedFMK)
                #expect(after.found.isEmpty, "erased bytes after the restart: \(after.found)")
                try await AgentTestKit.eventually("the audit service recorded the erasure", timeout: .seconds(30)) {
                    try await audit.withConnection { connection in
                        try await connection.query(
                            "SELECT count(*) FROM revocation_devices WHERE device_id = \(deviceID) AND state = 'applied'"
                        ).first!.decode(Int.self, column: 0)
                    } == 1
                }
                #expect(try await appliedAcks() == 1, "the erasure acked exactly once")
                let revoked = try await s.revoked.open()
                let state = try #require(try await revoked.engine.store.familyMember(s.member.id))
                #expect(state.status == .revoked && state.wrappedFMK == nil)
            }
        }
    }

    /// The files of `directory` and, per file, which erased bytes it holds.
    static func scan(
        _ directory: TemporaryDirectory, ciphertexts: [[UInt8]], wrappedFMK: [UInt8]
    ) throws -> (files: [String], found: [String]) {
        let files = try directory.allFileBytes()
        var found: [String] = []
        for (name, bytes) in files {
            if bytes.contains(bytes: wrappedFMK) { found.append("\(name): wrapped FMK") }
            let count = ciphertexts.filter { bytes.contains(bytes: $0) }.count
            if count > 0 { found.append("\(name): \(count) of \(ciphertexts.count) ciphertexts") }
        }
        return (files.map(\.name).sorted(), found)
    }
}
