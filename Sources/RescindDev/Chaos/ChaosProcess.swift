import Foundation
import RescindClient
import RescindDevKit
import Synchronization

/// A service or agent of a chaos run: one process at a time, killed and started again in its
/// place (same environment, same port), each generation logging to a file of its own, and each
/// killed by the kernel if the chaos run dies first (`exitsWithParent`).
final class ChaosProcess: Sendable {
    let name: String
    let executable: URL
    let arguments: [String]
    let environment: [String: String]
    let logs: URL
    /// `GET` answers 200 once the process serves (services); `nil` for agents.
    let readyURL: URL?
    private let state = Mutex<(child: ChildProcess?, generation: Int)>((nil, 0))

    init(name: String, executable: URL, arguments: [String], environment: [String: String], logs: URL, readyURL: URL?) {
        self.name = name
        self.executable = executable
        self.arguments = arguments
        self.environment = environment
        self.logs = logs
        self.readyURL = readyURL
    }

    var child: ChildProcess? { state.withLock { $0.child } }
    var pid: Int32? { child?.pid }
    var logFile: URL? { child?.logFile }

    /// Starts a new generation (with `extra` added to the environment) and, for a service,
    /// waits until it is ready.
    func start(extra: [String: String] = [:], timeout: Duration = .seconds(90)) async throws {
        let generation = state.withLock { state in
            state.generation += 1
            return state.generation
        }
        let child = try ChildProcess(
            name: "\(name).\(generation)", executable: executable, arguments: arguments,
            environment: environment.merging(extra) { $1 },
            output: .file(logs.appendingPathComponent("\(name).\(generation).log")), exitsWithParent: true)
        state.withLock { $0.child = child }
        guard let readyURL else { return }
        let deadline = ContinuousClock.now + timeout
        let client = GrantServiceClient(baseURL: readyURL.deletingLastPathComponent(), timeout: .seconds(2), tls: ChaosStack.clientTLS)
        while ContinuousClock.now < deadline, child.isRunning {
            if (try? await client.isReady()) == true { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw CLIError("\(name) did not become ready:\n\(child.logTail(lines: 30))")
    }

    /// SIGKILL: no graceful shutdown, no flush, no offset commit. Waits for the exit.
    func kill() async {
        guard let child else { return }
        child.signal(SIGKILL)
        _ = await child.exited()
    }

    func signal(_ signal: Int32) {
        child?.signal(signal)
    }

    /// SIGTERM (graceful), SIGKILL after `grace`.
    func stop(grace: Duration = .seconds(10)) async {
        guard let child else { return }
        child.signal(SIGCONT)
        await child.stop(grace: grace)
    }

    /// Waits until this generation's log contains `text` (or it exits).
    func waitForLog(_ text: String, timeout: Duration) async -> Bool {
        guard let child else { return false }
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if child.text.contains(text) { return true }
            if !child.isRunning { return false }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return false
    }
}
