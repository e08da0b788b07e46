import Foundation

/// A service or agent executable run as its own process, so that its memory is its own.
/// Its standard output and error go to a log file, shown when it fails.
///
/// Use `ChildProcess.run(…) { child in … }`: the child lives exactly as long as the body,
/// and is stopped (and reaped) however the body ends — returned, thrown or cancelled. A
/// child made with `init` must be stopped with `stop()` on every path by its owner.
final class ChildProcess: Sendable {
    let name: String
    let logFile: URL
    private let process: Process
    /// Waiters for the exit, resumed by the process's termination handler (a Foundation
    /// thread), so that waiting never blocks a thread of Swift's cooperative pool.
    private let exit = Locked(Exit.running([]))

    private enum Exit {
        case running([CheckedContinuation<Void, Never>])
        case exited
    }

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
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = log
        process.standardError = log
        let exit = self.exit
        process.terminationHandler = { _ in
            let waiters = exit.withLock { state -> [CheckedContinuation<Void, Never>] in
                defer { state = .exited }
                if case .running(let waiters) = state { return waiters }
                return []
            }
            for waiter in waiters { waiter.resume() }
        }
        try process.run()
    }

    /// Starts the child, runs `body` with it, then stops it — also when `body` throws or the
    /// task is cancelled.
    static func run<Result>(
        name: String, executable: URL, arguments: [String] = [], environment: [String: String], logDirectory: URL,
        isolation: isolated (any Actor)? = #isolation, _ body: (ChildProcess) async throws -> Result
    ) async throws -> Result {
        let child = try ChildProcess(
            name: name, executable: executable, arguments: arguments, environment: environment, logDirectory: logDirectory)
        do {
            let result = try await body(child)
            await child.stop()
            return result
        } catch {
            await child.stop()
            throw error
        }
    }

    var peakResident: Int? { ProcessMemory.peakResident(pid: pid) }

    /// The last lines of its log, for error messages.
    func logTail(lines: Int = 15) -> String {
        let text = (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").suffix(lines).joined(separator: "\n")
    }

    /// SIGTERM, then SIGKILL if it has not exited after `grace`; returns once it exited and
    /// was reaped. Safe to call more than once, and from a cancelled task (the grace period
    /// is a dispatch timer, not a `Task.sleep` that cancellation would cut short).
    func stop(grace: Duration = .seconds(10)) async {
        if process.isRunning { process.terminate() }
        let process = self.process
        let kill = DispatchWorkItem {
            if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + Timing.seconds(grace), execute: kill)
        await exited()
        kill.cancel()
    }

    /// Returns once the process exited (at once if it already has).
    func exited() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = exit.withLock { state -> Bool in
                guard case .running(let waiters) = state else { return true }
                state = .running(waiters + [continuation])
                return false
            }
            if done { continuation.resume() }
        }
    }
}
