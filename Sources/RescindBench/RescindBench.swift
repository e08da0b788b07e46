import Foundation
import Logging

/// `rescind-bench`: runs every benchmark of BENCHMARKS.md on this machine and prints, for
/// each figure, Rescind's number, the baseline measured in the same run and their ratio.
/// Raw measurements are printed as they are taken; the Markdown table comes last.
@main
struct RescindBenchCommand {
    static func main() async {
        do {
            let options = try BenchOptions(arguments: Array(CommandLine.arguments.dropFirst()))
            LoggingSystem.bootstrap { label in
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = Logger.Level(rawValue: ProcessInfo.processInfo.environment["RESCIND_LOG_LEVEL"] ?? "") ?? .critical
                return handler
            }
            try await run(options, logger: Logger(label: "rescind.bench"))
        } catch {
            FileHandle.standardError.write(Data("rescind-bench: \(error)\n".utf8))
            exit(1)
        }
    }

    static func run(_ options: BenchOptions, logger: Logger) async throws {
        let report = BenchReport()
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
            try CryptoBench.run(options: options, report: report)
        }
        let needsStack = options.sections.contains { $0 != .crypto }
        if needsStack {
            let stack = try await BenchStack.start(options: options, logger: logger)
            do {
                if options.sections.contains(.commit) { try await CommitBench.run(stack: stack, options: options, report: report) }
                if options.sections.contains(.fanout) {
                    try await FanOutBench.run(stack: stack, options: options, report: report, logger: logger)
                }
                if options.sections.contains(.throughput) {
                    try await ThroughputBench.run(stack: stack, options: options, report: report, logger: logger)
                }
                if options.sections.contains(.memory) {
                    try await MemoryBench.agent(stack: stack, options: options, report: report, logger: logger)
                } else {
                    report.begin("5. Memory: peak resident set (VmHWM from /proc/<pid>/status)")
                }
                MemoryBench.services(stack: stack, report: report)
            } catch {
                BenchReport.log("grant service log:\n\(stack.grant.logTail())\naudit service log:\n\(stack.audit.logTail())")
                await stack.stop()
                throw error
            }
            await stack.stop()
        }

        let elapsed = Date().timeIntervalSince(started)
        BenchReport.log("\nload average at end: \(MachineInfo.load); took \(Format.duration(elapsed))")
        BenchReport.log("\n" + (header.map { "    " + $0 }).joined(separator: "\n") + "\n")
        BenchReport.log(report.markdown)
    }
}
