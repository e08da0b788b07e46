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
        let rig = try await FanOutRig.prepare(agents: count, stack: stack, ledger: ledger, options: options, logger: logger)
        do {
            var samples: [Sample] = []
            var incomplete = 0
            // The first two revocations are warm-ups. The first forms every agent's consumer group:
            // its commands reach the agents one after another, seconds late, so they never fetch at
            // once and the process's connection pool stays at a few connections; the second opens
            // the connections that ten or fifty agents fetching at once need (a measured revocation
            // opening a dozen TLS connections was the slowest of its run, 270-320 ms at 10 agents).
            for iteration in -1...options.revocations {
                guard let sample = try await rig.revoke() else {
                    incomplete += 1
                    BenchReport.log("\(count) agents, revocation \(iteration): not every device acked in time")
                    continue
                }
                if iteration > 0 { samples.append(sample) }
                log(sample, as: "\(count) agents, revocation \(iteration)\(iteration <= 0 ? " (warm-up)" : "")")
            }
            let idleCPU = await idleCPUShare(seconds: 3)
            await rig.stop()
            return Measurement(samples: samples, incomplete: incomplete, idleCPU: idleCPU)
        } catch {
            await rig.stop()
            throw error
        }
    }

    /// One revocation's line of the raw output: its total and where the time went.
    static func log(_ sample: Sample, as label: String) {
        BenchReport.log(
            "\(label): total \(Format.duration(sample.total)) (the owner's revocation \(Format.duration(sample.revocation))) = "
                + "commit→broker \(Format.duration(sample.commitToBroker)) (commit call \(Format.duration(sample.commitCall))) + "
                + "broker→agent \(Format.duration(sample.brokerToAgent)) + agent work \(Format.duration(sample.agentWork)) + "
                + "ack→broker \(Format.duration(sample.ackToBroker)); audit +\(sample.lastAckToAudit.map(Format.duration) ?? "n/a")"
                + (sample.phases.map { "; last device's rotation: \(describe($0))" } ?? ""))
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
