import Foundation
import Logging
import RescindTracing
import Tracing

/// 8. What tracing costs: section 3's ten-agent fan-out — each revocation also the owner's
/// whole re-encryption of the family member's records — on fresh stacks with
/// `RESCIND_OTEL_EXPORTER_OTLP_ENDPOINT` unset and set, in turns (unset, set, set, unset) so that
/// a machine getting busier or quieter over the run weighs on both alike, after a warm-up turn
/// that is not counted (the run's first stack starts cold, and was slower whatever its setting). With it set every
/// process exports: both services, and this one (the owner's client and the ten agents) to a
/// stand-in collector (`BenchCollector`). This process's tracer is bootstrapped once, recording
/// only in the turns with the endpoint set (`RescindTracer.isRecording`).
enum TracingBench {
    /// The bound the figures are held to: p50 and p99 with tracing on within 5 % of the same with
    /// it off (or, when the machine moves one setting's own turns further apart, within that).
    static let bound = 0.05

    static func run(options: BenchOptions, report: BenchReport, logger: Logger) async throws {
        report.begin(
            "8. Tracing: RESCIND_OTEL_EXPORTER_OTLP_ENDPOINT unset and set (10 agents, \(options.recordsPerAgent) records, "
                + "fresh stacks in turns after a warm-up: unset, set, set, unset)")
        let collector = try await BenchCollector.start()
        let cost = await spanCost(collector: collector)
        let beforeTurns = collector.counts
        let exporter = OTLPExporter(settings: .init(endpoint: URL(string: collector.endpoint)!, serviceName: "rescind-bench"))
        let tracer = RescindTracer(sink: exporter, recording: false)
        InstrumentationSystem.bootstrap(tracer)
        let exporting = Task { await exporter.run() }
        var turns: [(traced: Bool, samples: [FanOutBench.Sample])] = []
        var incomplete: [Bool: Int] = [:]
        var tracedRevocations = 0
        do {
            let warmUp = try await measure(options: options, environment: [:], logger: logger)
            BenchReport.log(
                "warm-up (not counted): commit → last ack p99 " + Format.duration(Statistics.percentile(warmUp.samples.map(\.total), 99)))
            for traced in [false, true, true, false] {
                tracer.isRecording = traced
                let environment = traced ? ["RESCIND_OTEL_EXPORTER_OTLP_ENDPOINT": collector.endpoint] : [:]
                let measured = try await measure(options: options, environment: environment, logger: logger)
                turns.append((traced, measured.samples))
                incomplete[traced, default: 0] += measured.incomplete
                // Every revocation of the turn made spans: the measured ones, those incomplete, two warm-ups.
                if traced { tracedRevocations += measured.samples.count + measured.incomplete + 2 }
                BenchReport.log(
                    "tracing \(traced ? "on" : "off"): commit → last ack p99 "
                        + Format.duration(Statistics.percentile(measured.samples.map(\.total), 99)))
            }
        } catch {
            exporting.cancel()
            await collector.stop()
            throw error
        }
        tracer.isRecording = false
        exporting.cancel()
        await exporting.value
        let received = collector.counts
        await collector.stop()

        for (figure, path) in [
            ("commit → last ack", \FanOutBench.Sample.total),
            ("the owner's revocation (begin → committed)", \FanOutBench.Sample.revocation),
        ] {
            let values = turns.map { (traced: $0.traced, values: $0.samples.map { $0[keyPath: path] }) }
            let unset = values.filter { !$0.traced }.flatMap(\.values)
            let set = values.filter(\.traced).flatMap(\.values)
            guard !unset.isEmpty, !set.isEmpty, values.allSatisfy({ !$0.values.isEmpty }) else { continue }
            // How far apart two turns of one setting land: what the machine alone moves a figure by.
            func noise(_ percentile: Double) -> Double {
                [false, true].map { traced in
                    let same = values.filter { $0.traced == traced }.map { Statistics.percentile($0.values, percentile) }
                    guard let low = same.min(), let high = same.max(), low > 0 else { return 0 }
                    return high / low - 1
                }.max() ?? 0
            }
            var changes: [String] = []
            var verdicts: [String] = []
            for percentile in [50.0, 99] {
                let change = Statistics.percentile(set, percentile) / Statistics.percentile(unset, percentile) - 1
                let floor = noise(percentile)
                changes.append(String(format: "p%.0f %+.1f %% (turns of one setting %.1f %% apart)", percentile, change * 100, floor * 100))
                verdicts.append(abs(change) <= bound ? "met" : abs(change) <= floor ? "within the noise" : "not met")
            }
            let verdict = verdicts.contains("not met") ? "not met" : verdicts.contains("within the noise") ? "within the noise" : "met"
            report.add(
                "\(figure) p50 / p99, unset → set (\(unset.count) / \(set.count) revocations)",
                project: "\(Format.duration(Statistics.median(unset))) / \(Format.duration(Statistics.percentile(unset, 99))) → "
                    + "\(Format.duration(Statistics.median(set))) / \(Format.duration(Statistics.percentile(set, 99)))",
                baseline: "within \(Int(bound * 100)) %", ratio: "\(changes.joined(separator: "; ")): \(verdict)")
        }
        // The work tracing adds to a revocation, whatever the machine's noise: every span all the
        // processes made per traced revocation, at what one span costs on this machine.
        let spans = Double(received.spans - beforeTurns.spans) / Double(max(1, tracedRevocations))
        let work = (cost.path + cost.export) * spans
        let unsetMedian = Statistics.median(turns.filter { !$0.traced }.flatMap { $0.samples.map(\.total) })
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
                + "\(incomplete[false] ?? 0) unset, \(incomplete[true] ?? 0) set.")
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

    /// The fan-out's measured revocations on a stack of its own, started with `environment`.
    static func measure(options: BenchOptions, environment: [String: String], logger: Logger) async throws -> FanOutBench.Measurement {
        let stack = try await BenchStack.start(options: options, environment: environment, logger: logger)
        do {
            let ledger = try EventLedger(stack: stack, fetchWaitMilliseconds: options.fetchWaitMilliseconds, logger: logger)
            do {
                let measured = try await FanOutBench.measure(agents: 10, stack: stack, ledger: ledger, options: options, logger: logger)
                await ledger.stop()
                await stack.stop()
                return measured
            } catch {
                await ledger.stop()
                throw error
            }
        } catch {
            await stack.stop()
            throw error
        }
    }
}
