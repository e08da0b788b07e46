import ArgumentParser
import Foundation
import RescindDevKit

/// A dev-kit executable built next to `rescind-dev`, run with the arguments that follow its
/// name (its own `--help` lists them): `rescind-dev bench --quick` is `rescind-bench --quick`.
protocol ForwardedCommand: AsyncParsableCommand {
    static var executable: String { get }
    var arguments: [String] { get }
}

extension ForwardedCommand {
    func run() async throws {
        let path = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let sibling = URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent(Self.executable)
        let child: ChildProcess
        do {
            child = try ChildProcess(name: Self.executable, executable: sibling, arguments: arguments, output: .inherit)
        } catch let error as ChildProcess.LaunchError {
            throw CLIError("\(error) (swift build --product \(Self.executable))")
        }
        let status = await child.exited()
        if status != 0 { throw ExitCode(status) }
    }
}

struct BenchCommand: ForwardedCommand {
    static let executable = "rescind-bench"
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Run the benchmarks (rescind-bench; scripts/bench.sh builds it in release mode).",
        discussion: "Example:\n  rescind-dev bench --sections crypto --quick")

    @Argument(parsing: .captureForPassthrough, help: "rescind-bench's arguments.")
    var arguments: [String] = []
}

struct HostileCommand: ForwardedCommand {
    static let executable = "rescind-hostile"
    static let configuration = CommandConfiguration(
        commandName: "hostile",
        abstract: "Run the long hostile-input property (rescind-hostile, docs/reliability.md).",
        discussion: "Example:\n  rescind-dev hostile --per-topic 10000")

    @Argument(parsing: .captureForPassthrough, help: "rescind-hostile's arguments.")
    var arguments: [String] = []
}

struct BrokerCommand: ForwardedCommand {
    static let executable = "rescind-devbroker"
    static let configuration = CommandConfiguration(
        commandName: "broker",
        abstract: "Run the development Kafka broker (rescind-devbroker; scripts/stack.sh starts it).",
        discussion: "Example:\n  rescind-dev broker --brokers 1")

    @Argument(parsing: .captureForPassthrough, help: "rescind-devbroker's arguments.")
    var arguments: [String] = []
}
