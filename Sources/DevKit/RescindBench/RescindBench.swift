import Foundation
import Logging
import RescindObservability

/// `rescind-bench`: runs every benchmark of docs/benchmarks.md on this machine and prints, for
/// each figure, Rescind's number, the baseline measured in the same run and their ratio.
/// Raw measurements are printed as they are taken; the Markdown table comes last.
@main
struct RescindBenchCommand {
    static func main() async {
        RescindVersion.answerIfAsked()
        do {
            let options = try BenchOptions(arguments: Array(CommandLine.arguments.dropFirst()))
            LoggingSystem.bootstrap { label in
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = Logger.Level(rawValue: ProcessInfo.processInfo.environment["RESCIND_LOG_LEVEL"] ?? "") ?? .critical
                return handler
            }
            // SIGINT/SIGTERM cancel the run instead of killing it, so that every child process and
            // the stack's schemas are stopped and dropped on the way out; a second signal kills.
            let bench = Task { try await run(options, logger: Logger(label: "rescind.bench")) }
            let signals = [SIGINT, SIGTERM].map { number in
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler {
                    FileHandle.standardError.write(Data("rescind-bench: stopping (signal \(number)); again to kill\n".utf8))
                    signal(number, SIG_DFL)
                    source.cancel()
                    bench.cancel()
                }
                source.resume()
                return source
            }
            let failures = try await bench.value
            signals.forEach { $0.cancel() }
            if bench.isCancelled { exit(130) }
            if failures > 0 { exit(1) }
        } catch {
            FileHandle.standardError.write(Data("rescind-bench: \(error)\n".utf8))
            exit(1)
        }
    }

    /// Runs the chosen sections. A failed section is reported (a note in its table, the
    /// services' logs) and the run goes on with the next one; a cancelled run stops after
    /// the section it was in, and still stops the stack. - Returns: how many sections failed.
    static func run(_ options: BenchOptions, logger: Logger) async throws -> Int {
        let report = BenchReport()
        BenchReport.logToStandardError.withLock { $0 = options.json }
        let started = Date()
        let header = [
            "rescind-bench \(CommandLine.arguments.dropFirst().joined(separator: " "))",
            "date: \(ISO8601DateFormatter().string(from: started))",
            "machine: \(MachineInfo.summary)",
            "load average at start: \(MachineInfo.load)",
            "options: \(options.summary)",
        ]
        header.forEach(BenchReport.log)

        if options.sections.contains(.crypto) {
            try await CryptoBench.run(options: options, report: report)
            try CanonicalJSONBench.run(options: options, report: report)
        }
        var fleetJSON: String?
        if options.sections.contains(.fleet) {
            let fleet = try FleetBench.run(options: options, report: report)
            if options.json { fleetJSON = try FleetBench.json(fleet.results, inputs: fleet.inputs) }
        }
        let needsStack = options.sections.contains(where: \.needsStack)
        var failures = 0
        if needsStack {
            let stack = try await BenchStack.start(options: options, logger: logger)
            // A failed section is reported and the run goes on, so one failure does not lose the others.
            func section(_ name: BenchOptions.Section, _ body: () async throws -> Void) async {
                guard options.sections.contains(name), !Task.isCancelled else { return }
                do {
                    try await body()
                } catch {
                    failures += 1
                    let reason = Task.isCancelled ? "cancelled (\(error))" : "\(error)"
                    report.note("SECTION \(name.rawValue.uppercased()) FAILED: \(reason)")
                    BenchReport.log("grant service log:\n\(stack.grant.logTail())\naudit service log:\n\(stack.audit.logTail())")
                }
            }
            await section(.commit) { try await CommitBench.run(stack: stack, options: options, report: report) }
            await section(.keyhistory) { try await KeyHistoryBench.run(stack: stack, options: options, report: report) }
            // The agent (its own process) before the fan-out and throughput sections load the machine.
            await section(.memory) { try await MemoryBench.agent(stack: stack, options: options, report: report, logger: logger) }
            await section(.fanout) { try await FanOutBench.run(stack: stack, options: options, report: report, logger: logger) }
            await section(.throughput) {
                try await ThroughputBench.run(stack: stack, options: options, report: report, logger: logger)
            }
            report.begin("5. Memory: peak resident set (VmHWM from /proc/<pid>/status) — services")
            MemoryBench.services(stack: stack, report: report)
            // Last: its flood leaves rows and spent budgets behind, and its peak must not be the services' figure above.
            await section(.load) {
                let result = try await LoadBench.run(stack: stack, options: options.load, report: report)
                if result.honestRefused > 0 { throw BenchError("\(result.honestRefused) honest operations were refused") }
            }
            await stack.stop()
            if failures > 0 { BenchReport.log("\n\(failures) section(s) failed: see the notes") }
        }

        // After every other, on stacks of its own: it turns tracing on in this process for good.
        if options.sections.contains(.tracing), !Task.isCancelled {
            do {
                try await TracingBench.run(options: options, report: report, logger: logger)
            } catch {
                failures += 1
                report.note("SECTION TRACING FAILED: \(error)")
            }
        }

        let elapsed = Date().timeIntervalSince(started)
        BenchReport.log("\nload average at end: \(MachineInfo.load); took \(Format.duration(elapsed))")
        BenchReport.log("\n" + (header.map { "    " + $0 }).joined(separator: "\n") + "\n")
        BenchReport.log(report.markdown)
        if let fleetJSON { FileHandle.standardOutput.write(Data((fleetJSON + "\n").utf8)) }
        return failures
    }
}
