import ArgumentParser
import DeviceAgent
import Foundation
import Logging
import RescindClient
import RescindDevKit

/// `rescind-dev agent`: the device agent as `rescind-agent run` runs it, with the dev kit's
/// fault plan from the environment (`AgentFaultPlans.fromEnvironment`): with
/// `RESCIND_DEV_AGENT_STOP_AT=<step>` the process freezes (SIGSTOP) the first time a command
/// reaches that step, so that a test kills it exactly there. The product's `rescind-agent`
/// has no such hook: a stall cannot be configured into a production agent.
struct AgentCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "agent",
        abstract: "Run a device agent with a dev-kit fault plan (RESCIND_DEV_AGENT_STOP_AT=<step>).",
        discussion: """
            The agent reads the RESCIND_AGENT_* configuration as rescind-agent does. Steps: \
            \(AgentStep.allCases.map(\.rawValue).joined(separator: ", ")).
            Example:
              RESCIND_DEV_AGENT_STOP_AT=inside-transaction rescind-dev agent
            """)

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let faults: AgentFaults
        let configuration: AgentConfiguration
        do {
            faults = try AgentFaultPlans.fromEnvironment(environment)
            configuration = try AgentConfiguration(environment: environment)
        } catch {
            throw CLIError("\(error)")
        }
        let level = Logger.Level(rawValue: configuration.logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "rescind.agent")
        try await DeviceAgent(configuration: configuration, logger: logger, faults: faults).run()
    }
}
