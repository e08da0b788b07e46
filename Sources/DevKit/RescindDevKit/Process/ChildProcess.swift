import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import RescindObservability

/// The dev kit's one child-process launcher: services, agents, the CLI and scripts run as
/// processes of their own by the demo, the benchmarks and the tests.
///
/// Waiting for a child never blocks a thread of Swift's cooperative pool (on a 2-core machine
/// that starves the in-process services under test): the exit is reported by the process's
/// termination handler, and the output goes to files, read when asked for.
///
/// - `ChildProcess.run(executable, arguments)` runs to completion and returns the status
///   and output (optionally killed after a timeout).
/// - `ChildProcess.run(name:…) { child in … }` keeps a child exactly as long as the body,
///   and stops (and reaps) it however the body ends — returned, thrown or cancelled.
/// - `init` starts a child its owner must `stop()` on every path (or leave running, as the
///   demo does with its servers).
public final class ChildProcess: Sendable {
    /// Where the child's standard output and standard error go.
    public enum Output: Sendable {
        /// Both, interleaved, to this file (created or emptied).
        case file(URL)
        /// Each to a file of its own (created or emptied).
        case files(stdout: URL, stderr: URL)
        /// This process's own (an interactive script); `text` is then empty.
        case inherit
    }

    /// How a run to completion ended.
    public struct Result: Sendable {
        public let status: Int32
        public let stdout: String
        public let stderr: String
        /// Killed because it outlived the timeout.
        public let timedOut: Bool
        /// Standard output and standard error, interleaved when they were run that way
        /// (`separateOutput: false`), otherwise standard output then standard error.
        public let output: String
    }

    /// A launch that could not happen (the executable is missing or cannot run).
    public struct LaunchError: Error, CustomStringConvertible {
        public let description: String
    }

    public let name: String
    /// The file standard output (and, interleaved, standard error) is written to; `nil` when inherited.
    public let logFile: URL?
    private let errorFile: URL?
    private let process: Process
    /// Waiters for the exit, resumed by the process's termination handler (a Foundation thread).
    private let exit = ExitState()

    public var pid: Int32 { process.processIdentifier }
    public var isRunning: Bool { exit.status == nil && process.isRunning }

    /// Starts `executable arguments…`, standard input closed.
    /// - Parameters:
    ///   - environment: the child's whole environment; `nil` inherits this process's.
    ///   - directory: its working directory; `nil` keeps this process's.
    ///   - exitsWithParent: the kernel kills the child (SIGKILL) when this process dies, however it
    ///     dies (an abort, a SIGKILL), so that nothing it started outlives it. Linux only (through
    ///     `setpriv --pdeathsig`, which execs the executable: the pid is the child's own); the child
    ///     is started from one thread that lives as long as this process (`SpawnThread`), since the
    ///     kernel signals the child when the thread that started it ends, not the process.
    /// - Throws: `LaunchError` when the executable (or `setpriv`) is missing; Foundation's error
    ///   when it cannot run.
    public init(
        name: String, executable: URL, arguments: [String] = [], environment: [String: String]? = nil,
        directory: URL? = nil, output: Output, exitsWithParent: Bool = false
    ) throws {
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            throw LaunchError(description: "\(executable.path) is missing: build it first")
        }
        self.name = name
        process = Process()
        #if os(Linux)
        if exitsWithParent {
            guard FileManager.default.isExecutableFile(atPath: Self.setpriv.path) else {
                throw LaunchError(description: "\(Self.setpriv.path) is missing (util-linux): it ties a child's life to this process")
            }
            process.executableURL = Self.setpriv
            process.arguments = Self.parentDeathArguments + [executable.path] + arguments
        } else {
            process.executableURL = executable
            process.arguments = arguments
        }
        #else
        process.executableURL = executable
        process.arguments = arguments
        #endif
        if let environment { process.environment = environment }
        if let directory { process.currentDirectoryURL = directory }
        process.standardInput = FileHandle.nullDevice
        switch output {
        case .file(let url):
            logFile = url
            errorFile = nil
            let log = try Self.emptyFile(url)
            process.standardOutput = log
            process.standardError = log
        case .files(let stdout, let stderr):
            logFile = stdout
            errorFile = stderr
            process.standardOutput = try Self.emptyFile(stdout)
            process.standardError = try Self.emptyFile(stderr)
        case .inherit:
            logFile = nil
            errorFile = nil
        }
        let exit = self.exit
        process.terminationHandler = { finished in exit.finish(status: finished.terminationStatus) }
        if exitsWithParent {
            try SpawnThread.shared.run(process)
        } else {
            try process.run()
        }
        Self.watchExit(of: process.processIdentifier, into: exit)
    }

    /// util-linux's `setpriv`: sets the parent-death signal of the child, then execs the program.
    public static let setpriv = URL(fileURLWithPath: "/usr/bin/setpriv")
    /// The arguments that make `setpriv` run a program that gets SIGKILL when its parent dies.
    public static let parentDeathArguments = ["--pdeathsig", "KILL", "--"]

    /// Foundation on Linux learns that a child ended when a socket the child inherited reaches
    /// end-of-file: a grandchild that inherited it too (a shell's `sleep`, a daemon a script
    /// started) keeps the child "running" long after it exited, and whoever waits for it waits
    /// as long. So the exit is also read from the kernel: `waitid` with `WNOWAIT` sees the child
    /// as a zombie without reaping it (Foundation still reaps it, and its pid cannot be reused
    /// before that), polled every 50 ms until one of the two reports it.
    private static func watchExit(of pid: Int32, into exit: ExitState) {
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue.global())
        timer.schedule(deadline: .now() + .milliseconds(50), repeating: .milliseconds(50))
        timer.setEventHandler {
            if exit.status == nil, let status = exitStatus(of: pid) { exit.finish(status: status) }
            if exit.status != nil { timer.cancel() }
        }
        timer.resume()
    }

    /// The child's status once it has ended and before it is reaped, as Foundation reports it:
    /// the exit code, or the number of the signal that ended it; `nil` while it runs.
    private static func exitStatus(of pid: Int32) -> Int32? {
        var info = siginfo_t()
        guard waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0, info._sifields._sigchld.si_pid == pid else {
            return nil
        }
        return info._sifields._sigchld.si_status
    }

    /// Starts the child, runs `body` with it, then stops it — also when `body` throws or the
    /// task is cancelled.
    public static func run<Result>(
        name: String, executable: URL, arguments: [String] = [], environment: [String: String]? = nil,
        directory: URL? = nil, output: Output,
        isolation: isolated (any Actor)? = #isolation, _ body: (ChildProcess) async throws -> Result
    ) async throws -> Result {
        let child = try ChildProcess(
            name: name, executable: executable, arguments: arguments, environment: environment, directory: directory,
            output: output)
        do {
            let result = try await body(child)
            await child.stop()
            return result
        } catch {
            await child.stop()
            throw error
        }
    }

    /// Runs `executable arguments…` to completion. Cancelling the calling task kills the child
    /// (SIGKILL), so a test's time limit ends a hung child instead of waiting for it for ever.
    /// - Parameters:
    ///   - timeout: the child is killed (SIGKILL) after it; `Result.timedOut` says so.
    ///   - separateOutput: `false` interleaves standard error into standard output.
    public static func run(
        _ executable: URL, _ arguments: [String], environment: [String: String]? = nil, directory: URL? = nil,
        timeout: Duration? = nil, separateOutput: Bool = false
    ) async throws -> Result {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("rescind-child-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let stdout = scratch.appendingPathComponent("stdout")
        let output: Output =
            separateOutput ? .files(stdout: stdout, stderr: scratch.appendingPathComponent("stderr")) : .file(stdout)
        let child = try ChildProcess(
            name: executable.lastPathComponent, executable: executable, arguments: arguments, environment: environment,
            directory: directory, output: output)
        var timedOut = false
        let status = await withTaskCancellationHandler {
            if let timeout {
                timedOut = await child.waitForExit(timeout: timeout) == nil
                if timedOut { child.killGroup() }
            }
            return await child.exited()
        } onCancel: {
            child.killGroup()
        }
        let out = child.text
        let err = child.errorText
        return Result(status: status, stdout: out, stderr: err, timedOut: timedOut, output: separateOutput ? out + err : out)
    }

    /// What it wrote so far to `logFile` (with standard error, when interleaved).
    public var text: String { logFile.flatMap { try? String(contentsOf: $0, encoding: .utf8) } ?? "" }

    /// What it wrote so far to standard error, when that has a file of its own (else empty).
    public var errorText: String { errorFile.flatMap { try? String(contentsOf: $0, encoding: .utf8) } ?? "" }

    /// The last lines of its log, for error messages.
    public func logTail(lines: Int = 15) -> String {
        text.split(separator: "\n").suffix(lines).joined(separator: "\n")
    }

    public func signal(_ signal: Int32) {
        guard process.isRunning, exit.status == nil else { return }
        kill(process.processIdentifier, signal)
    }

    /// SIGKILL to the child and to every process of its process group (Foundation starts each
    /// child as the leader of a group of its own): what a timeout or a cancelled wait does, so
    /// that nothing the child started outlives it. Processes that moved to a group of their own
    /// (the services a Foundation child starts) are left alone.
    public func killGroup() {
        guard process.isRunning else { return }
        kill(-process.processIdentifier, SIGKILL)
        kill(process.processIdentifier, SIGKILL)
    }

    /// SIGTERM, then SIGKILL if it has not exited after `grace`; returns once it exited and
    /// was reaped. Safe to call more than once, and from a cancelled task (the grace period
    /// is a dispatch timer, not a `Task.sleep` that cancellation would cut short).
    public func stop(grace: Duration = .seconds(10)) async {
        if process.isRunning, exit.status == nil { process.terminate() }
        let process = self.process
        let exit = self.exit
        let kill = DispatchWorkItem {
            if process.isRunning, exit.status == nil { Foundation.kill(process.processIdentifier, SIGKILL) }
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + grace.seconds, execute: kill)
        _ = await exited()
        kill.cancel()
    }

    /// Returns its exit status once it exited (at once if it already has).
    @discardableResult
    public func exited() async -> Int32 {
        await withCheckedContinuation { continuation in exit.wait(continuation) }
    }

    /// Its exit status, or `nil` when it is still running after `timeout` or when the calling
    /// task is cancelled first (it is left running).
    public func waitForExit(timeout: Duration) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline, !Task.isCancelled {
            if let status = exit.status { return status }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return exit.status
    }

    private static func emptyFile(_ url: URL) throws -> FileHandle {
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        return try FileHandle(forWritingTo: url)
    }
}

/// The exit of one child and who waits for it.
///
/// `@unchecked Sendable`: `state` is only touched under `lock`.
private final class ExitState: @unchecked Sendable {
    private let lock = NSLock()
    private var waiters: [CheckedContinuation<Int32, Never>] = []
    private var exitStatus: Int32?

    var status: Int32? { lock.withLock { exitStatus } }

    func finish(status: Int32) {
        let waiting = lock.withLock {
            exitStatus = status
            defer { waiters = [] }
            return waiters
        }
        for waiter in waiting { waiter.resume(returning: status) }
    }

    func wait(_ continuation: CheckedContinuation<Int32, Never>) {
        let done = lock.withLock { () -> Int32? in
            if let exitStatus { return exitStatus }
            waiters.append(continuation)
            return nil
        }
        if let done { continuation.resume(returning: done) }
    }
}

/// The one thread that starts every child tied to this process's life (`exitsWithParent`).
///
/// The kernel sends a child its parent-death signal when the *thread* that forked it ends. Swift's
/// cooperative threads and Dispatch's workers come and go, so a child started from one of them
/// would be killed when that thread is retired; this thread never ends before the process does.
///
/// `@unchecked Sendable`: `jobs` is only touched under `condition`'s lock.
private final class SpawnThread: @unchecked Sendable {
    static let shared = SpawnThread()

    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []

    private init() {
        let thread = Thread { [self] in serve() }
        thread.name = "rescind.devkit.spawn"
        thread.start()
    }

    private func serve() {
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let job = jobs.removeFirst()
            condition.unlock()
            job()
        }
    }

    /// Runs `process.run()` on this thread and waits for it (a `posix_spawn`: milliseconds).
    func run(_ process: Process) throws {
        let box = SpawnJob(process)
        condition.lock()
        jobs.append { box.launch() }
        condition.signal()
        condition.unlock()
        box.done.wait()
        if let error = box.error { throw error }
    }
}

/// One launch handed to `SpawnThread`.
///
/// `@unchecked Sendable`: `process` is used by the spawn thread only while its submitter waits on
/// `done`; `error` is written before `done` is signalled and read after.
private final class SpawnJob: @unchecked Sendable {
    let process: Process
    let done = DispatchSemaphore(value: 0)
    var error: (any Error)?

    init(_ process: Process) { self.process = process }

    func launch() {
        do { try process.run() } catch { self.error = error }
        done.signal()
    }
}

extension ChildProcess {
    /// Starts `executable` with descriptors of this process as the child's own (`descriptors`:
    /// child descriptor → this process's), which Foundation's `Process` cannot pass beyond 0–2:
    /// Chromium's DevTools pipe is read on 3 and written on 4. Standard output and error go to
    /// /dev/null unless `descriptors` names them. The caller owns the child: it signals and
    /// reaps `pid` (`waitpid`) itself.
    /// - Throws: `LaunchError` when `posix_spawn` fails.
    public static func spawn(_ executable: String, arguments: [String], descriptors: [Int32: Int32]) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // Parked high first, so that a dup2 never targets its own source (which would keep
        // close-on-exec on it).
        let parked = descriptors.mapValues { fcntl($0, F_DUPFD_CLOEXEC, 100) }
        defer { parked.values.forEach { close($0) } }
        let devNull = open("/dev/null", O_WRONLY)
        defer { close(devNull) }
        for target in [Int32(1), 2] where parked[target] == nil {
            posix_spawn_file_actions_adddup2(&actions, devNull, target)
        }
        for (target, source) in parked {
            posix_spawn_file_actions_adddup2(&actions, source, target)
        }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        guard spawned == 0 else {
            throw LaunchError(description: "could not start \(executable) (posix_spawn \(spawned))")
        }
        return pid
    }
}
