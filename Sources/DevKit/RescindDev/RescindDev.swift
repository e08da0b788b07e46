import ArgumentParser
import RescindObservability

/// `rescind-dev`: the dev kit's commands, never part of the product. The demo plays the
/// guide's story on local servers; `stack` drives scripts/stack.sh; `bench`, `hostile` and
/// `broker` run the dev kit's `rescind-bench`, `rescind-hostile` and `rescind-devbroker`,
/// built next to it (separate executables: each keeps its own process and memory figures).
@main
struct RescindDev: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rescind-dev",
        abstract: "Develop Rescind: the demo, the local stack, the benchmarks, the hostile-input run, the broker.",
        discussion: """
            Examples:
              rescind-dev stack up && source .stack/env
              rescind-dev demo --records 200
              rescind-dev demo --down
              rescind-dev chaos --seed 7 --duration 300
            """,
        version: RescindVersion.current,
        subcommands: [
            DemoCommand.self,
            StackCommand.self,
            BenchCommand.self,
            HostileCommand.self,
            BrokerCommand.self,
            AgentCommand.self,
            ChaosCommand.self,
        ])
}
