import Foundation
import Logging
import RescindClient
import RescindObservability
import ServiceLifecycle

/// Carries out the commands in the inbox as they arrive, retrying with backoff while the
/// grant service is unreachable (the commands wait in the inbox meanwhile).
struct CommandExecutorService: Service {
    let engine: AgentEngine

    func run() async throws {
        let engine = self.engine
        try await runUntilShutdown {
            var backoff = Backoff(first: engine.configuration.retryInterval, maximum: engine.configuration.selfHealInterval)
            while !Task.isCancelled {
                do {
                    try await engine.processPendingCommands()
                    backoff.reset()
                    try await engine.commandsQueued.wait(upTo: .seconds(1))
                } catch let error as AgentError where error.isTransient {
                    let delay = backoff.next()
                    engine.logger.warning(
                        "commands wait for the grant service", metadata: [LogKey.error: "\(error)", LogKey.retryIn: "\(delay)"])
                    try await Task.sleep(for: delay)
                }
            }
        }
    }
}
