import DeviceAgent
import Foundation
import Logging
import RescindClient
import RescindProtocol

/// 3. Fan-out latency: from the owner's commit request to the last device's ack on the
/// broker, with 1, 10 and 50 device agents each caching the family member's records; one
/// device (the revoked user's) erases, the others rotate. Split into parts for the device
/// that acked last, and followed to the audit service's completion notice.
enum FanOutBench {
    struct Sample {
        /// The owner's whole revocation: begin, download, re-encrypt, upload, commit.
        var revocation: Double
        var total: Double
        var commitCall: Double
        var commitToBroker: Double
        var brokerToAgent: Double
        var agentWork: Double
        var ackToBroker: Double
        var lastAckToAudit: Double?
        var auditCommitToLastAck: Double?
        /// CPU from the commit request to the last ack.
        var cpu: CPUCounters
        /// The last device's rotation by phase (`nil`: it erased, or its agent did not record them).
        var phases: RotationPhases?
    }

    /// CPU seconds used so far by this process (owner client, agents, broker), the grant service,
    /// the audit service and the whole machine (PostgreSQL too), and when they were read.
    struct CPUCounters: Sendable {
        var bench = 0.0
        var grant = 0.0
        var audit = 0.0
        var machine = 0.0
        var seconds = 0.0

        init() {}

        init(stack: BenchStack) {
            bench = ProcessMemory.cpuSeconds() ?? 0
            grant = ProcessMemory.cpuSeconds(pid: stack.grant.pid) ?? 0
            audit = ProcessMemory.cpuSeconds(pid: stack.audit.pid) ?? 0
            machine = ProcessMemory.machineBusySeconds() ?? 0
            seconds = Timing.seconds(ContinuousClock.now - Self.origin)
        }

        private static let origin = ContinuousClock.now

        func since(_ earlier: CPUCounters) -> CPUCounters {
            var used = CPUCounters()
            (used.bench, used.grant, used.audit) = (bench - earlier.bench, grant - earlier.grant, audit - earlier.audit)
            (used.machine, used.seconds) = (machine - earlier.machine, seconds - earlier.seconds)
            return used
        }

        /// The machine's busy share of its cores over the window.
        var busyShare: Double { machine / max(seconds, 0.001) / Double(ProcessInfo.processInfo.activeProcessorCount) }
    }

    /// A rotation's phases in milliseconds, wall clock (and the CPU of the two synchronous ones).
    static func describe(_ phases: RotationPhases) -> String {
        phases.named.map { "\($0.phase) \(Format.duration(Timing.seconds($0.duration)))" }.joined(separator: " ")
            + " (cpu: verify \(Format.duration(Timing.seconds(phases.verifyCPU))), store \(Format.duration(Timing.seconds(phases.storeCPU))))"
    }

    static func run(stack: BenchStack, options: BenchOptions, report: BenchReport, logger: Logger) async throws {
        report.begin(
            "3. Fan-out latency: commit → last device ack (\(options.recordsPerAgent) cached records per agent, "
                + "fetch.wait.max.ms = \(options.fetchWaitMilliseconds), receipt hold \(options.receiptHoldMilliseconds.map { "\($0) ms" } ?? "default"), "
                + "\(options.brokerName))")
        let ledger = try EventLedger(stack: stack, fetchWaitMilliseconds: options.fetchWaitMilliseconds, logger: logger)
        do {
            for count in options.agentCounts {
                try await run(agents: count, stack: stack, ledger: ledger, options: options, report: report, logger: logger)
            }
            await ledger.stop()
        } catch {
            await ledger.stop()
            throw error
        }
        report.note(
            "Total = the last ack's publish time (Kafka create time) − the moment the owner's client sent the commit request; "
                + "it includes the commit transaction itself (\"commit call\"). Parts are those of the device that acked last: "
                + "commit → command published (commit transaction, NOTIFY, outbox relay), command → agent starts (consumer fetch, "
                + "inbox), agent work (DeviceAck.duration_ms: download + re-key of the cache, or erasure), ack written → published "
                + "(ack outbox and its producer, no linger). Audit = its `revocation_completed` notice's publish time − the last ack's.")
        report.note(
            "Tuned: every consumer (agents, the audit service via RESCIND_KAFKA_FETCH_WAIT_MS, the bench's own topic reader) "
                + "runs with fetch.wait.max.ms = \(options.fetchWaitMilliseconds) instead of librdkafka's 500 (the development "
                + "broker answers a waiting fetch only when it expires). Clients (owner and agents) use AsyncHTTPClient's shared pool.")
    }

    /// The measured revocations of one agent count (warm-ups left out), those that did not see
    /// every ack in time, and what the agents use idle.
    struct Measurement {
        var samples: [Sample]
        var incomplete: Int
        var idleCPU: Double
    }

    private static func run(
        agents count: Int, stack: BenchStack, ledger: EventLedger, options: BenchOptions, report: BenchReport, logger: Logger
    ) async throws {
        let measured = try await measure(agents: count, stack: stack, ledger: ledger, options: options, logger: logger)
        let (samples, incomplete, idleCPU) = (measured.samples, measured.incomplete, measured.idleCPU)
        let totals = samples.map(\.total)
        func p(_ values: [Double]) -> String {
            guard !values.isEmpty else { return "n/a" }
            return [50.0, 95, 99].map { Format.duration(Statistics.percentile(values, $0)) }.joined(separator: " / ")
        }
        let target = count <= 10 ? "p99 ≤ 250 ms (target, 10 agents)" : "p99 ≤ 1.5 s (target, 50 agents)"
        report.add(
            "\(count) agent\(count == 1 ? "" : "s"): commit → last ack p50 / p95 / p99 (\(samples.count) revocations)",
            project: p(totals), baseline: count == 1 ? "—" : target)
        let parts = [
            ("commit → command published", samples.map(\.commitToBroker)),
            ("command → agent starts", samples.map(\.brokerToAgent)),
            ("agent work", samples.map(\.agentWork)),
            ("ack → published", samples.map(\.ackToBroker)),
        ].map { "\($0.0) \(Format.duration(Statistics.median($0.1)))" }
        report.add("… parts, slowest device (p50)", project: parts.joined(separator: "; "))
        let rotations = samples.compactMap(\.phases)
        if !rotations.isEmpty {
            func median(_ phase: KeyPath<RotationPhases, Duration>) -> String {
                Format.duration(Statistics.median(rotations.map { Timing.seconds($0[keyPath: phase]) }))
            }
            report.add(
                "… slowest device's rotation by phase (p50 of \(rotations.count))",
                project: "key \(median(\.key)); download \(median(\.download)); verify \(median(\.verify)) (cpu \(median(\.verifyCPU))); "
                    + "store \(median(\.store)) (cpu \(median(\.storeCPU))); commit \(median(\.commit)); hand-off \(median(\.handOff))")
        }
        report.add("… commit call (request → response, p50)", project: Format.duration(Statistics.median(samples.map(\.commitCall))))
        let audit = samples.compactMap(\.lastAckToAudit)
        report.add(
            "… last ack → audit completion p50 / p95 / p99 (\(audit.count) of \(samples.count))", project: p(audit))
        let auditView = samples.compactMap(\.auditCommitToLastAck)
        if !auditView.isEmpty {
            report.add(
                "… audit service's own commit_to_last_ack_ms (p50, server clocks)",
                project: Format.duration(Statistics.median(auditView)))
        }
        report.note(
            "\(count) agents: CPU per revocation (p50), commit request to last ack: bench process (owner client, agents, broker) "
                + String(format: "%.3f s, grant service %.3f s, audit service %.3f s; the whole machine %.3f s, ",
                    Statistics.median(samples.map(\.cpu.bench)), Statistics.median(samples.map(\.cpu.grant)),
                    Statistics.median(samples.map(\.cpu.audit)), Statistics.median(samples.map(\.cpu.machine)))
                + String(format: "%.0f%% of its %d cores over the window", Statistics.median(samples.map(\.cpu.busyShare)) * 100,
                    ProcessInfo.processInfo.activeProcessorCount))
        if incomplete > 0 { report.note("\(count) agents: \(incomplete) revocation(s) did not see every ack within 60 s") }
        report.note(
            "\(count) agents: one process (the bench) hosts them all; with nothing to do they use "
                + String(format: "%.0f%%", idleCPU * 100) + " of one core together (consumer fetch polling included).")
    }

    /// Agents enrolled and synced, then two warm-up revocations and `options.revocations`
    /// measured ones of the same family member (its records re-encrypted by the owner each time).
    static func measure(
        agents count: Int, stack: BenchStack, ledger: EventLedger, options: BenchOptions, logger: Logger
    ) async throws -> Measurement {
        // Devices: `rotating` spread over the owner and up to four other grantees; the revoked
        // user's one device erases (with a single agent, the revoked user has no device).
        let rotating = count == 1 ? 1 : count - 1
        let holders = min(5, rotating)
        let owner = try await stack.user("Fan-out owner \(count)")
        var users = [owner]
        for index in 1..<holders { users.append(try await stack.user("Fan-out grantee \(count)-\(index)")) }
        let revoked = try await stack.user("Fan-out revoked \(count)")
        var identities: [AgentIdentity] = []
        for index in 0..<rotating {
            let user = users[index % holders]
            identities.append(index < holders ? user.firstDevice : try await user.addDevice("agent \(index)"))
        }
        if count == 1 {
            try await revoked.retireFirstDevice()
        } else {
            identities.append(revoked.firstDevice)
        }

        let seeded = try await RecordSeeder.seed(stack, owner: owner.session, count: options.recordsPerAgent, byteCount: options.recordBytes)
        for user in users.dropFirst() + [revoked] { try await owner.session.grant(seeded.familyMemberID, to: user.userID) }
        let (fleet, startup) = try await Timing.measure {
            try await AgentFleet.start(
                identities, stack: stack, fetchWaitMilliseconds: options.fetchWaitMilliseconds,
                receiptHoldMilliseconds: options.receiptHoldMilliseconds, logger: logger)
        }
        BenchReport.log("\(count) agents: enrolled and synced \(options.recordsPerAgent) records each in \(Format.duration(startup))")
        do {
            for member in fleet.members {
                let held = try await member.agent.status().familyMembers.first { $0.familyMemberID == seeded.familyMemberID }
                guard held?.records == options.recordsPerAgent else {
                    throw BenchError("agent \(member.identity.deviceID) holds \(held?.records ?? 0) records after its first sync")
                }
            }
            let revokedAgent = fleet.member(revoked.firstDevice.deviceID)

            var samples: [Sample] = []
            var incomplete = 0
            // The first two revocations are warm-ups. The first forms every agent's consumer group:
            // its commands reach the agents one after another, seconds late, so they never fetch at
            // once and the process's connection pool stays at a few connections; the second opens
            // the connections that ten or fifty agents fetching at once need (a measured revocation
            // opening a dozen TLS connections was the slowest of its run, 270-320 ms at 10 agents).
            for iteration in -1...options.revocations {
                let sample = try await revokeOnce(
                    owner: owner, revoked: revoked, revokedAgent: revokedAgent, familyMemberID: seeded.familyMemberID,
                    devices: identities.count, ledger: ledger, stack: stack, fleet: fleet, options: options)
                guard let sample else {
                    incomplete += 1
                    BenchReport.log("\(count) agents, revocation \(iteration): not every device acked in time")
                    continue
                }
                if iteration > 0 { samples.append(sample) }
                BenchReport.log(
                    "\(count) agents, revocation \(iteration)\(iteration <= 0 ? " (warm-up)" : ""): total \(Format.duration(sample.total)) = "
                        + "commit→broker \(Format.duration(sample.commitToBroker)) (commit call \(Format.duration(sample.commitCall))) + "
                        + "broker→agent \(Format.duration(sample.brokerToAgent)) + agent work \(Format.duration(sample.agentWork)) + "
                        + "ack→broker \(Format.duration(sample.ackToBroker)); audit +\(sample.lastAckToAudit.map(Format.duration) ?? "n/a")"
                        + (sample.phases.map { "; last device's rotation: \(describe($0))" } ?? ""))
            }
            let idleCPU = await idleCPUShare(seconds: 3)
            await fleet.stop()
            return Measurement(samples: samples, incomplete: incomplete, idleCPU: idleCPU)
        } catch {
            await fleet.stop()
            throw error
        }
    }

    /// Revokes, waits for every ack (and the audit notice), then re-grants the revoked user and
    /// re-syncs their device for the next round. `nil` when some device did not ack in time.
    private static func revokeOnce(
        owner: BenchUser, revoked: BenchUser, revokedAgent: AgentFleet.Member?, familyMemberID: UUID, devices: Int,
        ledger: EventLedger, stack: BenchStack, fleet: AgentFleet, options: BenchOptions
    ) async throws -> Sample? {
        let marks = Locked<[RevocationProgress.Phase: Date]>([:])
        // CPU counters when the commit request goes out: the window is the fan-out's, not the
        // owner's download, re-encryption and upload before it.
        let atCommit = Locked<CPUCounters?>(nil)
        let (committed, revocation) = try await Timing.measure {
            try await owner.session.revoke(familyMemberID, user: revoked.userID, uploadBatchSize: options.uploadBatch) { progress in
                let now = Date()
                if progress.phase == .committing { atCommit.withLock { $0 = $0 ?? CPUCounters(stack: stack) } }
                marks.withLock { if $0[progress.phase] == nil { $0[progress.phase] = now } }
            }
        }
        guard committed.devicesNotified == devices else {
            throw BenchError("the commit notified \(committed.devicesNotified) devices, expected \(devices)")
        }
        let acks = await ledger.waitForAcks(committed.eventID, count: devices, timeout: .seconds(60))
        let used = atCommit.current.map { CPUCounters(stack: stack).since($0) } ?? CPUCounters()
        _ = await Timing.wait(timeout: .seconds(5)) { ledger.completion(of: committed.eventID) != nil }

        try await owner.session.grant(familyMemberID, to: revoked.userID)
        try await revokedAgent?.agent.selfHeal()
        try? await Task.sleep(for: .milliseconds(100))

        guard acks.count == devices, let last = acks.values.max(by: { $0.publishedAt < $1.publishedAt }),
            let sent = marks.current[.committing], let answered = marks.current[.committed]
        else { return nil }
        for ack in acks.values where ack.ack.outcome == .failed {
            throw BenchError("device \(ack.ack.deviceID) failed its command: \(ack.ack.error ?? "")")
        }
        let commandAt = ledger.commands(of: committed.eventID)[last.ack.deviceID] ?? sent
        let work = Double(last.ack.durationMs) / 1000
        let started = last.ack.ackedAt.addingTimeInterval(-work)
        let completion = ledger.completion(of: committed.eventID)
        return Sample(
            revocation: revocation,
            total: last.publishedAt.timeIntervalSince(sent),
            commitCall: answered.timeIntervalSince(sent),
            commitToBroker: commandAt.timeIntervalSince(sent),
            brokerToAgent: started.timeIntervalSince(commandAt),
            agentWork: work,
            ackToBroker: last.publishedAt.timeIntervalSince(last.ack.ackedAt),
            lastAckToAudit: completion.map { $0.publishedAt.timeIntervalSince(last.publishedAt) },
            auditCommitToLastAck: completion?.commitToLastAckMs.map { Double($0) / 1000 },
            cpu: used,
            phases: fleet.member(last.ack.deviceID)?.agent.rotationPhases(ackID: last.ack.ackID))
    }

    /// CPU this process uses while idle, as a share of one core.
    static func idleCPUShare(seconds: Double) async -> Double {
        let before = ProcessMemory.cpuSeconds() ?? 0
        let start = ContinuousClock.now
        try? await Task.sleep(for: .seconds(seconds))
        let elapsed = Timing.seconds(ContinuousClock.now - start)
        return ((ProcessMemory.cpuSeconds() ?? 0) - before) / elapsed
    }
}
