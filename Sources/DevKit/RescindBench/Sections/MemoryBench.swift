import DeviceAgent
import Foundation
import Logging
import RescindClient
import RescindDevKit
import RescindProtocol
import RescindTLS

/// 5. Peak resident memory (VmHWM) of each component in its own process: the grant and
/// audit services over the whole run, and a `rescind-agent` process that syncs
/// `agentMemoryRecords` records and then rotates them all once.
enum MemoryBench {
    static func agent(stack: BenchStack, options: BenchOptions, report: BenchReport, logger: Logger) async throws {
        report.begin("5. Memory: peak resident set (VmHWM from /proc/<pid>/status) — device agent")
        let records = options.agentMemoryRecords
        let owner = try await stack.user("Memory owner")
        let holder = try await stack.user("Memory device user")
        let revoked = try await stack.user("Memory revoked")
        try await revoked.retireFirstDevice()
        BenchReport.log("memory: seeding")
        let seeded = try await RecordSeeder.seed(stack, owner: owner.session, count: records, byteCount: options.recordBytes)
        try await owner.session.grant(seeded.familyMemberID, to: revoked.userID)

        BenchReport.log("memory: enrolling the agent")
        let identity = holder.firstDevice
        let configuration = try AgentFleet.configuration(for: identity, stack: stack, fetchWaitMilliseconds: nil)
        try await AgentEnrolment.install(
            userKeys: identity.keys, deviceID: identity.deviceID, deviceKey: identity.deviceKey, configuration: configuration)
        guard case .keyFile(let keyFile) = configuration.unlock else { throw BenchError("agent configuration without a key file") }
        let environment = [
                "RESCIND_AGENT_DATA_DIR": configuration.dataDirectory,
                "RESCIND_AGENT_GRANT_SERVICE_URL": stack.grantURL.absoluteString,
                "RESCIND_AGENT_ALLOW_PLAIN_HTTP": "loopback",
                "RESCIND_AGENT_GRANT_SERVICE_KEY": Data(stack.serviceKey.rawRepresentation).base64EncodedString(),
                "RESCIND_AGENT_KEY_FILE": keyFile,
                "RESCIND_KAFKA_BOOTSTRAP_SERVERS": stack.bootstrapServers,
                "RESCIND_TOPIC_PREFIX": stack.topicPrefix,
                "RESCIND_AGENT_LOG_LEVEL": "warning",
                // No MALLOC_* variables: the agent sets its allocator itself (`MemoryAllocator`).
            ]
        func withAgent<Result>(_ name: String, _ body: (ChildProcess) async throws -> Result) async throws -> Result {
            try await ChildProcess.run(
                name: name, executable: try BenchStack.executableDirectory().appendingPathComponent("rescind-agent"),
                arguments: ["run"], environment: environment,
                output: .file(stack.workDirectory.appendingPathComponent("\(name).log")), body)
        }
        // First the same agent with nothing to hold: what a running agent costs by itself.
        let idlePeak = try await withAgent("agent-idle") { idle in
            try await Task.sleep(for: .seconds(3))
            guard idle.isRunning else { throw BenchError("rescind-agent exited:\n\(idle.logTail())") }
            return idle.peakResident
        }

        try await owner.session.grant(seeded.familyMemberID, to: holder.userID)
        let ledger = try EventLedger(stack: stack, fetchWaitMilliseconds: options.fetchWaitMilliseconds, logger: logger)
        let measured: (sync: Double, afterSync: Int?, afterRotation: Int?, rotationMs: Int)
        do {
            measured = try await withAgent("agent") { process in
                BenchReport.log("memory: waiting for the first sync")
                let syncStart = ContinuousClock.now
                let synced = try await Timing.wait(timeout: .seconds(300), interval: .milliseconds(200)) {
                    guard process.isRunning else { throw BenchError("rescind-agent exited:\n\(process.logTail())") }
                    let status = try? await AgentStatus.read(configuration: configuration)
                    return status?.familyMembers.first { $0.familyMemberID == seeded.familyMemberID }?.records == records
                }
                guard synced else { throw BenchError("rescind-agent did not sync \(records) records:\n\(process.logTail())") }
                let syncSeconds = Timing.seconds(ContinuousClock.now - syncStart)
                let afterSync = process.peakResident

                BenchReport.log("memory: revoking (the agent rotates)")
                let committed = try await revokeLogged(
                    seeded.familyMemberID, user: revoked.userID, owner: owner, uploadBatch: options.uploadBatch)
                let acks = await ledger.waitForAcks(committed.eventID, count: 1, timeout: .seconds(300))
                guard let ack = acks[identity.deviceID]?.ack, ack.outcome == .applied else {
                    throw BenchError("rescind-agent did not apply the rotation:\n\(process.logTail())")
                }
                return (syncSeconds, afterSync, process.peakResident, ack.durationMs)
            }
            await ledger.stop()
        } catch {
            await ledger.stop()
            throw error
        }
        let (syncSeconds, afterSync, afterRotation) = (measured.sync, measured.afterSync, measured.afterRotation)
        BenchReport.log(
            "agent process: synced \(records) records in \(Format.duration(syncSeconds)) (VmHWM \(Format.mebibytes(afterSync))), "
                + "rotated them in \(measured.rotationMs) ms (VmHWM \(Format.mebibytes(afterRotation)))")
        report.add(
            "device agent (`rescind-agent run`), \(Format.grouped(Double(records))) cached records, first sync + one rotation",
            project: Format.mebibytes(afterRotation), baseline: "≤ 64 MiB (target)",
            ratio: afterRotation.map { String(format: "%.2f of target", Double($0) / Double(64 << 20)) } ?? "—")
        report.add("… the same agent running with nothing cached (started before the grant)", project: Format.mebibytes(idlePeak))
        report.add("… after the first sync, before the rotation", project: Format.mebibytes(afterSync))
        report.note(
            "Agent: its own `rescind-agent run` process (its allocator set by itself: two arenas, large blocks always mapped), started before it had access (idle figure), then "
                + "again after the grant: it syncs \(Format.grouped(Double(records))) records, then one revocation of another "
                + "grantee makes it rotate them all (download, verify every record under the new FMK, replace the cache in one "
                + "transaction). A sync or rotation longer than one page (1,000 records) holds one page in memory at a time: "
                + "each verified page waits in the cache's incoming table until the swap.")
    }

    /// The owner's revocation, with the time of each phase logged; a failure names the phase
    /// it happened in (and so the request: begin, the record pages, an upload batch, the
    /// commit) and how long that request had been waiting.
    private static func revokeLogged(
        _ familyMemberID: UUID, user revokedUserID: UUID, owner: BenchUser, uploadBatch: Int
    ) async throws -> RevocationCommitted {
        struct Trace {
            var phase = "begin"
            var phaseStart = ContinuousClock.now
            var lastProgress = ContinuousClock.now
            var recordsDone = 0
        }
        let start = ContinuousClock.now
        let trace = Locked(Trace())
        func since(_ instant: ContinuousClock.Instant) -> String { Format.duration(Timing.seconds(ContinuousClock.now - instant)) }
        do {
            let committed = try await owner.session.revoke(familyMemberID, user: revokedUserID, uploadBatchSize: uploadBatch) {
                progress in
                let now = ContinuousClock.now
                let ended = trace.withLock { trace -> (String, ContinuousClock.Instant)? in
                    defer { trace.lastProgress = now; trace.recordsDone = progress.recordsDone }
                    guard trace.phase != progress.phase.rawValue else { return nil }
                    defer { trace.phase = progress.phase.rawValue; trace.phaseStart = now }
                    return (trace.phase, trace.phaseStart)
                }
                if let (phase, phaseStart) = ended {
                    BenchReport.log("memory: revocation \(phase) took \(Format.duration(Timing.seconds(now - phaseStart)))")
                }
            }
            BenchReport.log("memory: revocation committed, \(since(start)) in all")
            return committed
        } catch {
            let trace = trace.current
            throw BenchError(
                "the revocation failed in its \(trace.phase) phase (\(trace.recordsDone) records done) \(since(trace.phaseStart)) "
                    + "after it began, \(since(trace.lastProgress)) after the last progress: \(error)")
        }
    }

    /// The services' peaks, read at the end of the run (VmHWM covers the process's whole life).
    static func services(stack: BenchStack, report: BenchReport) {
        report.add("grant service (`rescind-grant-service`), whole run", project: Format.mebibytes(stack.grant.peakResident))
        report.add("audit service (`rescind-audit-service`), whole run", project: Format.mebibytes(stack.audit.peakResident))
        report.add(
            "bench process (owner clients, in-process agents, development broker)",
            project: Format.mebibytes(ProcessMemory.peakResident()))
    }
}
