import ArgumentParser
import DeviceAgent
import Foundation
import RescindClient
import RescindLifecycle
import RescindObservability

// rescind-agent: the headless device agent. Configuration from RESCIND_AGENT_* and the
// shared RESCIND_KAFKA_BOOTSTRAP_SERVERS / RESCIND_TOPIC_PREFIX (see docs/configuration.md).
//
// The subcommands are ArgumentParser commands (`AgentCommands.swift`), as in the `rescind` CLI.
// Help stays the one page `usage`, printed for `help`, `--help` or `-h` anywhere, without reading
// any configuration; `--version` prints the version; no subcommand means `run`. A usage error or a failure prints one line
// (`rescind-agent: …`) and exits 1.

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("rescind-agent: \(message)\n".utf8))
    exit(1)
}

// A page of records freed goes back to the system, not to malloc's heap (`MemoryAllocator`).
MemoryAllocator.configureAgent(environment: ProcessInfo.processInfo.environment)

let arguments = Array(CommandLine.arguments.dropFirst())
// Help needs no configuration.
if arguments.first == "help" || arguments.contains("--help") || arguments.contains("-h") {
    print(usage)
    exit(0)
}
// As every Rescind executable: the version alone, on standard output.
RescindVersion.answerIfAsked(arguments)
let command: any ParsableCommand
do {
    command = try RescindAgent.parseAsRoot(arguments)
} catch {
    fail("\(RescindAgent.message(for: error))\n\(usage)")
}
do {
    guard let subcommand = command as? any AgentSubcommand else { fail("a subcommand is needed\n\(usage)") }
    try await subcommand.execute()
} catch {
    fail("\(error)")
}
