import Foundation

/// A service or agent executable run as its own process, so that its memory is its own.
/// Its standard error goes to a log file, shown when it fails to start.
final class ChildProcess: Sendable {
    let name: String
    let logFile: URL
    private let process: Process

    var pid: Int32 { process.processIdentifier }
    var isRunning: Bool { process.isRunning }

    init(name: String, executable: URL, arguments: [String] = [], environment: [String: String], logDirectory: URL) throws {
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            throw BenchError("\(executable.path) is missing: build it first (scripts/bench.sh does)")
        }
        self.name = name
        logFile = logDirectory.appendingPathComponent("\(name).log")
        _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        let log = try FileHandle(forWritingTo: logFile)
        process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = environment
        process.standardOutput = log
        process.standardError = log
        try process.run()
    }

    var peakResident: Int? { ProcessMemory.peakResident(pid: pid) }

    /// The last lines of its log, for error messages.
    func logTail(lines: Int = 15) -> String {
        let text = (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").suffix(lines).joined(separator: "\n")
    }

    /// SIGTERM, then waits up to `timeout` for a graceful exit before SIGKILL.
    func stop(timeout: Duration = .seconds(10)) async {
        guard process.isRunning else { return }
        process.terminate()
        if await !Timing.wait(timeout: timeout, interval: .milliseconds(20), { !process.isRunning }) {
            kill(pid, SIGKILL)
            process.waitUntilExit()
        }
    }
}
