import Foundation
import Logging
import RescindClient
import RescindObservability
import ServiceLifecycle

/// Self-heals at start, then every `selfHealInterval`; after a failure it retries with a
/// growing delay, so the first pass after the network returns (a reconnect) heals at once.
struct SelfHealService: Service {
    let engine: AgentEngine

    func run() async throws {
        let engine = self.engine
        try await runUntilShutdown {
            let configuration = engine.configuration
            var backoff = Backoff(first: configuration.retryInterval, maximum: configuration.selfHealInterval)
            var failing = false
            while !Task.isCancelled {
                do {
                    _ = try await engine.selfHeal()
                    if failing { engine.logger.notice("grant service reachable again; self-heal pass complete") }
                    failing = false
                    backoff.reset()
                    try await Task.sleep(for: configuration.selfHealInterval)
                } catch let error as AgentError where error.isTransient {
                    if !failing { engine.logger.warning("self-heal postponed", metadata: [LogKey.error: "\(error)"]) }
                    failing = true
                    try await Task.sleep(for: backoff.next())
                }
            }
        }
    }
}
