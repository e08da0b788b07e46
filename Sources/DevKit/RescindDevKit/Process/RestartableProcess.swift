import Foundation
import RescindClient
import RescindTLS
import Synchronization

/// A service or agent that a fault run kills and starts again in its place (same program, same
/// environment, so the same port): one process at a time, each generation logging to
/// `<logs>/<name>.<generation>.log`. Launched through `ChildProcess`.
public final class RestartableProcess: Sendable {
    public struct NotReady: Error, CustomStringConvertible {
        public let description: String
    }

    public let name: String
    public let executable: URL
    public let arguments: [String]
    public let environment: [String: String]
    public let logs: URL
    /// `GET` answers 200 once the process serves (services); `nil` for agents.
    public let readyURL: URL?
    /// Whether each generation dies with this process (`ChildProcess`'s `exitsWithParent`).
    public let exitsWithParent: Bool
    private let state = Mutex<(child: ChildProcess?, generation: Int)>((nil, 0))

    public init(
        name: String, executable: URL, arguments: [String] = [], environment: [String: String], logs: URL, readyURL: URL?,
        exitsWithParent: Bool = true
    ) {
        self.name = name
        self.executable = executable
        self.arguments = arguments
        self.environment = environment
        self.logs = logs
        self.readyURL = readyURL
        self.exitsWithParent = exitsWithParent
    }

    /// The current generation's process (`nil` before the first start).
    public var child: ChildProcess? { state.withLock { $0.child } }
    public var pid: Int32? { child?.pid }
    public var logFile: URL? { child?.logFile }

    /// Starts a new generation (with `extra` added to the environment) and, for a service,
    /// waits until `readyURL` answers 200.
    /// - Throws: `NotReady` (with the log's tail) when it exits or is not ready within `timeout`;
    ///   `ChildProcess.LaunchError` when the executable is missing.
    public func start(extra: [String: String] = [:], timeout: Duration = .seconds(90)) async throws {
        let generation = state.withLock { state in
            state.generation += 1
            return state.generation
        }
        let child = try ChildProcess(
            name: "\(name).\(generation)", executable: executable, arguments: arguments,
            environment: environment.merging(extra) { $1 },
            output: .file(logs.appendingPathComponent("\(name).\(generation).log")), exitsWithParent: exitsWithParent)
        state.withLock { $0.child = child }
        guard let readyURL else { return }
        let deadline = ContinuousClock.now + timeout
        let client = GrantServiceClient(
            baseURL: readyURL.deletingLastPathComponent(), timeout: .seconds(2), tls: ClientTLS(plainHTTP: .loopback))
        while ContinuousClock.now < deadline, child.isRunning {
            if (try? await client.isReady()) == true { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw NotReady(description: "\(name) did not become ready:\n\(child.logTail(lines: 30))")
    }

    /// SIGKILL: no graceful shutdown, no flush, no offset commit. Waits for the exit.
    public func kill() async {
        guard let child else { return }
        child.signal(SIGKILL)
        _ = await child.exited()
    }

    public func signal(_ signal: Int32) {
        child?.signal(signal)
    }

    /// SIGCONT (a paused process), then SIGTERM (graceful), SIGKILL after `grace`.
    public func stop(grace: Duration = .seconds(10)) async {
        guard let child else { return }
        child.signal(SIGCONT)
        await child.stop(grace: grace)
    }

    /// Waits until this generation's log contains `text` (or it exits).
    public func waitForLog(_ text: String, timeout: Duration) async -> Bool {
        guard let child else { return false }
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if child.text.contains(text) { return true }
            if !child.isRunning { return false }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    /// The last lines of the current generation's log.
    public func logTail(lines: Int = 20) -> String {
        child?.logTail(lines: lines) ?? ""
    }
}
