import ArgumentParser
import Foundation

/// Starts or stops the local development stack (PostgreSQL + the development Kafka broker).
struct StackCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stack",
        abstract: "Start, stop or inspect the local PostgreSQL and Kafka broker.",
        discussion: """
            Runs scripts/stack.sh of the repository (installs what is missing on `up`).
            Source .stack/env afterwards for the addresses.

            Example:
              rescind stack up && source .stack/env
            """)

    enum Action: String, ExpressibleByArgument, CaseIterable {
        case up, down, status, env, reset
    }

    @Argument(help: "up, down, status, env or reset.")
    var action: Action

    @Option(help: "The repository root (default: the current directory).")
    var root: String = FileManager.default.currentDirectoryPath

    func run() throws {
        let script = URL(fileURLWithPath: root).appendingPathComponent("scripts/stack.sh")
        guard FileManager.default.isExecutableFile(atPath: script.path) else {
            throw CLIError("\(script.path) not found: run from the repository root or pass --root")
        }
        let process = Process()
        process.executableURL = script
        process.arguments = [action.rawValue]
        try process.run()
        process.waitUntilExit()
        if process.terminationStatus != 0 { throw ExitCode(process.terminationStatus) }
    }
}
