import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The `rescind-agent` executable run as a child process, with its stderr collected.
final class AgentProcess {
    /// Next to the test bundle in the build directory (`swift build --build-tests` builds it).
    static var executable: URL? {
        let url = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("rescind-agent")
        return FileManager.default.isExecutableFile(atPath: url.path) ? url : nil
    }

    private let process: Process
    private let output = OutputBuffer()

    /// Starts `rescind-agent arguments…` with exactly `environment`.
    init(_ arguments: [String], environment: [String: String]) throws {
        let executable = try #require(Self.executable, "rescind-agent is not built next to the tests")
        process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = environment
        let pipe = Pipe()
        process.standardError = pipe
        process.standardOutput = pipe
        let output = self.output
        pipe.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            if !data.isEmpty { output.append(data) }
        }
        try process.run()
    }

    var text: String { output.text }
    var lines: [String] { text.split(separator: "\n").map(String.init) }

    /// Waits until the output contains `needle`.
    func waitFor(_ needle: String, timeout: Duration = .seconds(30)) async throws {
        let deadline = ContinuousClock.now + timeout
        while !text.contains(needle) {
            guard ContinuousClock.now < deadline, process.isRunning || text.contains(needle) else {
                Issue.record("rescind-agent never printed \"\(needle)\"; output:\n\(text)")
                throw CancellationError()
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Waits for the process to exit and returns its status.
    func exitStatus(timeout: Duration = .seconds(30)) async throws -> Int32 {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            guard ContinuousClock.now < deadline else {
                process.interrupt()
                Issue.record("rescind-agent did not exit")
                throw CancellationError()
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        try await Task.sleep(for: .milliseconds(50))  // the last output
        return process.terminationStatus
    }

    func signal(_ signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    /// Runs to completion and returns (status, output).
    static func run(_ arguments: [String], environment: [String: String]) async throws -> (Int32, String) {
        let process = try AgentProcess(arguments, environment: environment)
        let status = try await process.exitStatus()
        return (status, process.text)
    }
}

/// Output collected from the child's pipe on Foundation's reader thread.
private final class OutputBuffer: Sendable {
    private let collected = Mutex("")

    func append(_ data: Data) {
        collected.withLock { $0 += String(decoding: data, as: UTF8.self) }
    }

    var text: String { collected.withLock { $0 } }
}
