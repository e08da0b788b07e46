import ArgumentParser
import Foundation
import RescindDevKit

/// Starts or stops the local development stack (PostgreSQL + the development Kafka broker).
struct StackCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stack",
        abstract: "Start, stop or inspect the local PostgreSQL and Kafka broker.",
        discussion: """
            Runs scripts/stack.sh of the repository (installs what is missing on `up`).
            Source .stack/env afterwards for the addresses.

            Example:
              rescind-dev stack up && source .stack/env
            """)

    enum Action: String, ExpressibleByArgument, CaseIterable {
        case up, down, status, env, reset
    }

    @Argument(help: "up, down, status, env or reset.")
    var action: Action

    @Option(help: "The repository root (default: the current directory).")
    var root: String = FileManager.default.currentDirectoryPath

    func run() async throws {
        let script = URL(fileURLWithPath: root).appendingPathComponent("scripts/stack.sh")
        guard FileManager.default.isExecutableFile(atPath: script.path) else {
            throw CLIError("\(script.path) not found: run from the repository root or pass --root")
        }
        let child = try ChildProcess(name: "stack.sh", executable: script, arguments: [action.rawValue], output: .inherit)
        let status = await child.exited()
        if status != 0 { throw ExitCode(status) }
    }
}
