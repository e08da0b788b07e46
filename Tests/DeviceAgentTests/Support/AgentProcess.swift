import Foundation
import RescindDevKit
import Testing

/// The `rescind-agent` executable run as a child process by the dev kit's launcher, its
/// standard output and error collected in a log file of its own.
final class AgentProcess {
    /// Next to the test bundle in the build directory (`swift build --build-tests` builds it).
    static var executable: URL? {
        let url = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("rescind-agent")
        return FileManager.default.isExecutableFile(atPath: url.path) ? url : nil
    }

    private let child: ChildProcess
    private let scratch: URL

    /// `rescind-dev`, whose `agent` command runs the agent with a dev-kit fault plan.
    static var devExecutable: URL? {
        let url = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("rescind-dev")
        return FileManager.default.isExecutableFile(atPath: url.path) ? url : nil
    }

    /// Starts `rescind-agent arguments…` (or `executable`) with exactly `environment`.
    init(_ arguments: [String], environment: [String: String], executable: URL? = nil) throws {
        let executable = try #require(executable ?? Self.executable, "rescind-agent is not built next to the tests")
        scratch = FileManager.default.temporaryDirectory.appendingPathComponent("rescind-agent-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        child = try ChildProcess(
            name: "rescind-agent", executable: executable, arguments: arguments, environment: environment,
            output: .file(scratch.appendingPathComponent("output.log")))
    }

    deinit {
        try? FileManager.default.removeItem(at: scratch)
    }

    var text: String { child.text }
    var lines: [String] { text.split(separator: "\n").map(String.init) }

    /// Waits until the output contains `needle`.
    func waitFor(_ needle: String, timeout: Duration = .seconds(30)) async throws {
        let deadline = ContinuousClock.now + timeout
        while !text.contains(needle) {
            guard ContinuousClock.now < deadline, child.isRunning || text.contains(needle) else {
                Issue.record("rescind-agent never printed \"\(needle)\"; output:\n\(text)")
                throw CancellationError()
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Waits for the process to exit and returns its status.
    func exitStatus(timeout: Duration = .seconds(30)) async throws -> Int32 {
        guard let status = await child.waitForExit(timeout: timeout) else {
            child.signal(SIGINT)
            Issue.record("rescind-agent did not exit")
            throw CancellationError()
        }
        return status
    }

    func signal(_ signal: Int32) {
        child.signal(signal)
    }

    /// Runs to completion and returns (status, output).
    static func run(_ arguments: [String], environment: [String: String]) async throws -> (Int32, String) {
        let process = try AgentProcess(arguments, environment: environment)
        let status = try await process.exitStatus()
        return (status, process.text)
    }
}
