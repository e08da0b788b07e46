import Foundation
import RescindDevKit
import RescindTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The `rescind` binary from the build directory (or `rescind-admin`, `rescind-dev`), run as a
/// separate process by the dev kit's launcher. Waiting for it never blocks a thread of the
/// cooperative pool: the in-process services under test need those threads to answer it.
enum RescindProcess {
    /// The executables sit beside the test bundle in the build directory.
    static let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        .appendingPathComponent("rescind")

    /// The device agent, built beside it (for enrolling a profile's second device).
    static let agentBinary = binary.deletingLastPathComponent().appendingPathComponent("rescind-agent")

    /// The operator's tool and the dev kit's command, built beside it.
    static let adminBinary = binary.deletingLastPathComponent().appendingPathComponent("rescind-admin")
    static let devBinary = binary.deletingLastPathComponent().appendingPathComponent("rescind-dev")

    static var isBuilt: Bool { FileManager.default.isExecutableFile(atPath: binary.path) }

    /// What one run printed and how it ended.
    struct Output: CustomStringConvertible {
        var executable = "rescind"
        let arguments: [String]
        let status: Int32
        let stdout: String
        let stderr: String
        let timedOut: Bool

        /// Non-empty lines of both streams, standard error last.
        var lines: [String] {
            (stdout + "\n" + stderr).split(separator: "\n").map(String.init)
                .filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
        }

        var description: String {
            "\(executable) \(arguments.joined(separator: " ")) → \(timedOut ? "timed out" : "exit \(status)")\n"
                + "stdout: \(stdout)\nstderr: \(stderr)"
        }
    }

    /// Runs `rescind arguments` with exactly `environment` (plus a PATH, a HOME of its own and
    /// the suite's CA as `RESCIND_CA_FILE` / `RESCIND_AGENT_CA_FILE`, which `environment` may
    /// override), standard input closed; kills it after `timeout`.
    static func run(
        _ arguments: [String], environment: [String: String] = [:], timeout: Duration = .seconds(90),
        executable: URL = binary
    ) async throws -> Output {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("rescind-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let ca = try await TestTLS.shared().caFile
        // LD_LIBRARY_PATH is passed on: the Tansu pass loads a newer librdkafka in every process.
        let library = ProcessInfo.processInfo.environment["LD_LIBRARY_PATH"].map { ["LD_LIBRARY_PATH": $0] } ?? [:]
        let result = try await ChildProcess.run(
            executable, arguments,
            environment: ["PATH": "/usr/bin:/bin", "HOME": scratch.path, "RESCIND_CA_FILE": ca, "RESCIND_AGENT_CA_FILE": ca]
                .merging(library) { $1 }.merging(environment) { $1 },
            timeout: timeout, separateOutput: true)
        return Output(
            executable: executable.lastPathComponent, arguments: arguments, status: result.status, stdout: result.stdout, stderr: result.stderr, timedOut: result.timedOut)
    }
}

extension RescindProcess {
    /// Runs `rescind-admin arguments` (see `run`).
    static func admin(
        _ arguments: [String], environment: [String: String] = [:], timeout: Duration = .seconds(90)
    ) async throws -> Output {
        try await run(arguments, environment: environment, timeout: timeout, executable: adminBinary)
    }

    /// Runs `rescind-dev arguments` (see `run`).
    static func dev(
        _ arguments: [String], environment: [String: String] = [:], timeout: Duration = .seconds(90)
    ) async throws -> Output {
        try await run(arguments, environment: environment, timeout: timeout, executable: devBinary)
    }
}

extension RescindProcess.Output {
    /// A failure the user can act on: non-zero exit, exactly one line (so no stack trace)
    /// starting with "Error:", containing each of `fragments`.
    func expectOneLineError(_ fragments: String..., sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(!timedOut && status != 0 && status != 64, "\(self)", sourceLocation: sourceLocation)
        #expect(lines.count == 1, "not one line: \(self)", sourceLocation: sourceLocation)
        #expect(lines.first?.hasPrefix("Error: ") == true, "\(self)", sourceLocation: sourceLocation)
        for fragment in fragments {
            #expect(stderr.contains(fragment), "missing \"\(fragment)\": \(self)", sourceLocation: sourceLocation)
        }
    }

    /// A command line the parser refused: exit 64 (EX_USAGE), the reason first, then the usage.
    func expectUsageError(_ fragment: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(!timedOut && status == 64, "\(self)", sourceLocation: sourceLocation)
        #expect(lines.first?.hasPrefix("Error: ") == true, "\(self)", sourceLocation: sourceLocation)
        #expect(stderr.contains("Usage: \(executable)"), "\(self)", sourceLocation: sourceLocation)
        if let fragment {
            #expect(stderr.contains(fragment), "missing \"\(fragment)\": \(self)", sourceLocation: sourceLocation)
        }
    }
}
