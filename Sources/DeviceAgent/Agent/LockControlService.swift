import Foundation
import Logging
import RescindClient
import RescindObservability
import ServiceLifecycle
import UnixSignals

/// The operator's switch: SIGUSR1 locks the agent (keys dropped), SIGUSR2 unlocks it by
/// reading the configured passphrase file or key file again. A failed unlock is logged and
/// the agent stays locked.
struct LockControlService: Service {
    let engine: AgentEngine

    func run() async throws {
        let signals = await UnixSignalsSequence(trapping: .sigusr1, .sigusr2)
        let engine = self.engine
        engine.logger.info("lock control ready: SIGUSR1 locks, SIGUSR2 unlocks")
        try await runUntilShutdown {
            for await signal in signals {
                do {
                    if signal == .sigusr1 {
                        try await engine.lock()
                    } else {
                        try await engine.unlock()
                    }
                } catch let error as AgentError {
                    engine.logger.error(
                        signal == .sigusr1 ? "lock failed" : "unlock failed; still locked", metadata: [LogKey.error: "\(error)"])
                }
            }
        }
    }
}
