import Foundation
import Logging
import RescindDevKit
import RescindTracing
import Tracing

/// 8. What tracing costs: section 3's ten-agent fan-out — each revocation also the owner's
/// whole re-encryption of the family member's records — on two stacks side by side, A and B,
/// one of them with `RESCIND_OTEL_EXPORTER_OTLP_ENDPOINT` set in its services. Revocations
/// alternate between the stacks (A, B, B, A, …), so whatever the machine does over a minute —
/// on this one its speed drifts by a quarter — weighs on both settings at once; and the stacks
/// swap roles phase by phase (A traced, then B, B, A, …; the services restarted each phase) so
/// that what differs between the two stacks cancels out. With the endpoint set every process
/// exports: the stack's two services, and this one (both owners' clients and all twenty agents)
/// to a stand-in collector (`BenchCollector`). This process's tracer is bootstrapped once and
/// records only during the traced stack's revocations (`RescindTracer.isRecording`).
enum TracingBench {
    /// The bound the figures are held to: p50 and p99 with tracing on no more than 5 % above the
    /// same with it off, for 95 % of the resamplings of the run's pairs of revocations.
    static let bound = 0.05
    /// Which stack is traced, phase after phase (false: A, true: B), repeated.
    static let pattern = [false, true, true, false]
    /// Measured pairs between two restores of the revoked user's family members (each stack's rig
    /// holds two more than this).
    static let block = 20

    static func run(options: BenchOptions, report: BenchReport, logger: Logger) async throws {
        report.begin(
            "8. Tracing: RESCIND_OTEL_EXPORTER_OTLP_ENDPOINT unset and set (10 agents, \(options.recordsPerAgent) records; "
                + "two stacks side by side, revocations alternating between them; \(options.tracingPhases) phases of "
                + "\(options.revocations) pairs after warm-up pairs (until both audit services conclude revocations again), the traced stack A, B, B, A, …)")
        let collector = try await BenchCollector.start()
        let cost = await spanCost(collector: collector)
        let beforePairs = collector.counts
        let exporter = OTLPExporter(settings: .init(endpoint: URL(string: collector.endpoint)!, serviceName: "rescind-bench"))
        let tracer = RescindTracer(sink: exporter, recording: false)
        InstrumentationSystem.bootstrap(tracer)
        let exporting = Task { await exporter.run() }
        let measured: Run
        do {
            measured = try await measurePairs(options: options, endpoint: collector.endpoint, tracer: tracer, logger: logger)
        } catch {
            tracer.isRecording = false
            exporting.cancel()
            await collector.stop()
            throw error
        }
        exporting.cancel()
        await exporting.value
        let received = collector.counts
        await collector.stop()

        var generator = SeededGenerator(seed: 8)
        for (figure, path) in [
            ("commit → last ack", \FanOutBench.Sample.total),
            ("the owner's revocation (begin → committed)", \FanOutBench.Sample.revocation),
        ] {
            let pairs = measured.pairs.map { (phase: $0.phase, unset: $0.unset[keyPath: path], set: $0.set[keyPath: path]) }
            guard !pairs.isEmpty else { continue }
            var changes: [String] = []
            var met = true
            for percentile in [50.0, 99] {
                let change = Self.change(pairs, percentile: percentile)
                let (low, high) = interval(pairs, percentile: percentile, using: &generator)
                changes.append(
                    String(format: "p%.0f %+.1f %% (resampled: %+.1f to %+.1f %%)", percentile, change * 100, low * 100, high * 100))
                // What is bounded is the cost: met when even the 95th percentile of the resampled
                // changes adds no more than the bound (a traced run that is faster costs nothing).
                met = met && high <= bound
            }
            let (unset, set) = (pairs.map(\.unset), pairs.map(\.set))
            report.add(
                "\(figure) p50 / p99, unset → set (\(pairs.count) pairs)",
                project: "\(Format.duration(Statistics.median(unset))) / \(Format.duration(Statistics.percentile(unset, 99))) → "
                    + "\(Format.duration(Statistics.median(set))) / \(Format.duration(Statistics.percentile(set, 99)))",
                baseline: "at most +\(Int(bound * 100)) %", ratio: "\(changes.joined(separator: "; ")): \(met ? "met" : "not met")")
        }
        // The work tracing adds to a revocation, whatever the machine's noise: every span all the
        // processes made per traced revocation, at what one span costs on this machine.
        let spans = Double(received.spans - beforePairs.spans) / Double(max(1, measured.tracedRevocations))
        let work = (cost.path + cost.export) * spans
        let unsetMedian = Statistics.median(measured.pairs.map(\.unset.total))
        report.add(
            "tracing's work per revocation: spans made (all processes) × one span's cost (on the path + exported)",
            project: String(format: "%.0f spans × (", spans) + "\(Format.duration(cost.path)) + \(Format.duration(cost.export))) = "
                + Format.duration(work),
            baseline: "commit → last ack p50, unset: \(Format.duration(unsetMedian))",
            ratio: String(format: "%.2f %% of it", work / unsetMedian * 100)
                + (work / unsetMedian <= bound ? ": met" : ": not met"))
        let counts = exporter.counts
        report.note(
            "With the endpoint set, this process exported \(counts.exported) spans (\(counts.dropped) dropped, "
                + "\(counts.failedBatches) batches refused); the collector took \(received.requests) requests, "
                + "\(Format.grouped(Double(received.bytes))) bytes of OTLP JSON from all three processes. Incomplete revocations: "
                + "\(measured.incomplete[false] ?? 0) unset, \(measured.incomplete[true] ?? 0) set.")
        report.note(
            "A pair: one revocation on each stack, back to back (their order alternating), one with tracing and one without. "
                + "Resampled: the change recomputed over 1,000 draws of the pairs with replacement (each phase's among its own), "
                + "its 5th to 95th percentile. "
                + "A traced revocation's spans are exported in the second after it, partly while the next revocation runs, "
                + "which is as often the other setting's: the export's own cost is the row of spans × one span's cost.")
    }

    /// The pairs of measured revocations (one on each setting, back to back), how many
    /// revocations the traced stacks made in all, and how many did not see every ack in time.
    struct Run {
        var pairs: [(phase: Int, unset: FanOutBench.Sample, set: FanOutBench.Sample)] = []
        var tracedRevocations = 0
        var incomplete: [Bool: Int] = [:]
    }

    /// Two stacks, ten agents each; for each phase both stacks' services restarted (the traced
    /// one with `endpoint`), warm-up pairs until both audit services conclude revocations again,
    /// then `options.revocations` measured pairs. Each revocation of the warm-up or of a block of
    /// `block` measured pairs is of a family member of its own; the revoked user gets them back
    /// after each, outside the pairs measured.
    static func measurePairs(options: BenchOptions, endpoint: String, tracer: RescindTracer, logger: Logger) async throws -> Run {
        let block = min(Self.block, options.revocations)
        var stacks: [BenchStack] = []
        var ledgers: [EventLedger] = []
        var rigs: [FanOutRig] = []
        func stop() async {
            for rig in rigs { await rig.stop() }
            for ledger in ledgers { await ledger.stop() }
            for stack in stacks { await stack.stop() }
        }
        do {
            for _ in 0..<2 {
                let stack = try await BenchStack.start(options: options, logger: logger)
                stacks.append(stack)
                let ledger = try EventLedger(stack: stack, fetchWaitMilliseconds: options.fetchWaitMilliseconds, logger: logger)
                ledgers.append(ledger)
                // A family member for each revocation of a warm-up or of a block of measured pairs:
                // the revoked user is granted them again after each block, not between the revocations
                // measured. Bounded, so that a long phase does not grow every agent's cache (a larger
                // cache is a slower rotation, and no longer section 3's fan-out).
                rigs.append(
                    try await FanOutRig.prepare(
                        agents: 10, familyMembers: block + 2, stack: stack, ledger: ledger, options: options, logger: logger))
            }
            var run = Run()
            for phase in 0..<options.tracingPhases {
                let tracedStack = pattern[phase % pattern.count] ? 1 : 0
                for (index, stack) in stacks.enumerated() {
                    try await restart(stack.services, environment: index == tracedStack ? ["RESCIND_OTEL_EXPORTER_OTLP_ENDPOINT": endpoint] : [:])
                }
                let first = run.pairs.count
                // One revocation on stack `index`, recorded by this process's tracer when that
                // stack is the traced one, and logged; `nil` when some device did not ack in time.
                func revoke(on index: Int, slot: String) async throws -> FanOutBench.Sample? {
                    let traced = index == tracedStack
                    tracer.isRecording = traced
                    let sample = try await rigs[index].revoke()
                    tracer.isRecording = false
                    if traced { run.tracedRevocations += 1 }
                    if let sample { FanOutBench.log(sample, as: Self.label(phase: phase, stack: index, traced: traced, slot: slot)) }
                    return sample
                }
                // Warm-up: pairs until each stack's audit service has concluded a revocation since
                // its restart (its consumer back in its group, which takes it some seconds), at least
                // two; the revocations measured then never overlap its catching up.
                var live: Set<Int> = []
                var warmUps = 0
                while warmUps < 2 || live.count < stacks.count {
                    guard warmUps < block + 2 else {
                        throw BenchError("phase \(phase + 1): an audit service concluded no revocation after \(warmUps) warm-up pairs")
                    }
                    for index in warmUps.isMultiple(of: 2) ? [0, 1] : [1, 0] {
                        let sample = try await revoke(on: index, slot: "warm-up \(warmUps + 1)")
                        if sample?.lastAckToAudit != nil { live.insert(index) }
                    }
                    warmUps += 1
                }
                for rig in rigs { try await rig.restore() }
                for slot in 1...options.revocations {
                    if slot > 1, (slot - 1).isMultiple(of: block) {
                        for rig in rigs { try await rig.restore() }
                    }
                    var pair: [Bool: FanOutBench.Sample] = [:]
                    for index in slot.isMultiple(of: 2) ? [0, 1] : [1, 0] {
                        let traced = index == tracedStack
                        guard let sample = try await revoke(on: index, slot: "revocation \(slot)") else {
                            run.incomplete[traced, default: 0] += 1
                            continue
                        }
                        pair[traced] = sample
                    }
                    if let unset = pair[false], let set = pair[true] { run.pairs.append((phase, unset, set)) }
                }
                for rig in rigs { try await rig.restore() }
                let phasePairs = run.pairs[first...]
                BenchReport.log(
                    "phase \(phase + 1), stack \(tracedStack == 0 ? "A" : "B") traced: commit → last ack p50 "
                        + "\(Format.duration(Statistics.median(phasePairs.map(\.unset.total)))) off, "
                        + "\(Format.duration(Statistics.median(phasePairs.map(\.set.total)))) on")
            }
            await stop()
            return run
        } catch {
            await stop()
            throw error
        }
    }

    static func label(phase: Int, stack: Int, traced: Bool, slot: String) -> String {
        "phase \(phase + 1), stack \(stack == 0 ? "A" : "B") (tracing \(traced ? "on" : "off")), \(slot)"
    }

    /// Stops both services and starts them again with `environment` added, nothing else changed.
    static func restart(_ services: ServiceProcesses, environment: [String: String]) async throws {
        for process in services.grants + services.audits {
            await process.stop()
            try await process.start(extra: environment)
        }
    }

    typealias Pair = (phase: Int, unset: Double, set: Double)

    /// The change of a percentile with tracing on.
    static func change(_ pairs: [Pair], percentile: Double) -> Double {
        Statistics.percentile(pairs.map(\.set), percentile) / Statistics.percentile(pairs.map(\.unset), percentile) - 1
    }

    /// The 5th and 95th percentiles of `change` over 1,000 draws of the pairs with replacement,
    /// each phase's from its own (so that every draw keeps both stacks traced equally often).
    static func interval(_ pairs: [Pair], percentile: Double, using generator: inout SeededGenerator) -> (low: Double, high: Double) {
        let phases = Dictionary(grouping: pairs, by: \.phase).sorted { $0.key < $1.key }.map(\.value)
        let changes = (0..<1_000).map { _ in
            let drawn = phases.flatMap { phase in phase.indices.map { _ in phase[phase.startIndex + Int(generator.next() % UInt64(phase.count))] } }
            return change(drawn, percentile: percentile)
        }
        return (Statistics.percentile(changes, 5), Statistics.percentile(changes, 95))
    }

    /// What one span costs here: started under a parent, given three attributes and ended (the
    /// work on the path of what it traces), then exported (JSON and an HTTP POST to the collector,
    /// in the background), each divided over 20,000 spans.
    static func spanCost(collector: BenchCollector) async -> (path: Double, export: Double) {
        func seconds(_ duration: Duration) -> Double {
            Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        }
        let count = 20_000
        var settings = OTLPExporter.Settings(endpoint: URL(string: collector.endpoint)!, serviceName: "rescind-bench")
        settings.capacity = count
        let exporter = OTLPExporter(settings: settings)
        let tracer = RescindTracer(sink: exporter)
        let root = tracer.startAnySpan("revocation", context: .topLevel, ofKind: .internal)
        let clock = ContinuousClock()
        let started = clock.now
        for index in 0..<count {
            let span = tracer.startAnySpan("upload", context: root.context, ofKind: .client)
            span.attributes["http.request.method"] = "PUT"
            span.attributes["http.response.status_code"] = 200
            span.attributes["rescind.records"] = index
            span.end()
        }
        let path = seconds(clock.now - started) / Double(count)
        let exported = clock.now
        await exporter.sendQueued()
        let export = seconds(clock.now - exported) / Double(count)
        root.end()
        return (path, export)
    }
}
