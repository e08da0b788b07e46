import Foundation
import Logging
import RescindKafka
import RescindObservability
import ServiceLifecycle
import Synchronization

/// Reads the input topics as a member of the audit service's consumer group, hands
/// each message to the handler and commits its offset once the handler succeeded
/// (at least once; the handler is idempotent).
///
/// A transient handler failure (storage unavailable) is retried with backoff on the same
/// message, so a partition never skips one; a failure that depends on the message is
/// quarantined (`HandlingFailure`), so no message can stall a partition. On graceful shutdown the message in hand is finished
/// and committed before the consumer leaves its group.
struct InboundConsumer: Service {
    let configuration: KafkaConsumerConfiguration
    let topics: [String]
    let handler: InboundMessageHandler
    let retry: AuditServiceConfiguration.HandlingRetry
    let health: ConsumerHealth
    /// Told the consumer while it runs, so that its lag can be asked.
    let lagProbe: ConsumerLagProbe
    let logger: Logger

    /// Whether a message is in hand, so that shutdown knows whether it may close at once.
    final class Phase: Sendable {
        enum Value { case idle, busy, stopping }
        private let value = Mutex(Value.idle)

        /// `false` once stopping: the message must not be started.
        func begin() -> Bool { value.withLock { if $0 == .stopping { false } else { ($0 = .busy, true).1 } } }
        /// `true` when stopping was requested meanwhile.
        func end() -> Bool { value.withLock { if $0 == .stopping { true } else { ($0 = .idle, false).1 } } }
        /// - Returns: whether nothing was in hand.
        func stop() -> Bool { value.withLock { ($0 == .idle, $0 = .stopping).0 } }
        var isStopping: Bool { value.withLock { $0 == .stopping } }
    }

    func run() async throws {
        let consumer = try KafkaConsumer(configuration: configuration, subscription: .group(topics: topics), logger: logger)
        lagProbe.attach(consumer)
        defer { lagProbe.attach(nil) }
        let phase = Phase()
        await withGracefulShutdownHandler {
            do {
                for try await message in consumer.messages {
                    guard phase.begin() else { break }
                    if await handleUntilDone(message, phase: phase) {
                        do {
                            try await consumer.commit(message)
                        } catch {
                            logger.warning("offset commit failed; the message will be redelivered", metadata: [LogKey.error: "\(error)"])
                        }
                    }
                    if phase.end() { break }
                }
            } catch {
                logger.error("consumer failed", metadata: [LogKey.error: "\(error)"])
            }
        } onGracefulShutdown: {
            // Idle: nothing to finish, leave at once. Busy: the loop stops after its commit.
            if phase.stop() { Task { await consumer.close() } }
        }
        await consumer.close()
    }

    /// Retries a transient failure with backoff (shown in `/ready` and `/metrics`); quarantines
    /// a message whose failure depends on its content, or that keeps failing while the
    /// database answers (`retry.budget` attempts: the backstop for a misclassified error).
    /// - Returns: `true` once handled or quarantined; `false` if shutdown or cancellation came first.
    private func handleUntilDone(_ message: KafkaMessage, phase: Phase) async -> Bool {
        handler.received(message)
        var backoff = Backoff(first: retry.firstDelay, maximum: retry.maximumDelay)
        var attempts = 0
        while !Task.isCancelled {
            let failure: HandlingFailure
            do {
                try await handler.handle(message)
                health.recovered()
                handler.metrics.retrying(false)
                return true
            } catch {
                attempts += 1
                failure = HandlingFailure.classify(error)
                handler.metrics.handlingFailed(failure)
                logger.warning(
                    "handling failed",
                    metadata: [
                        LogKey.topic: "\(message.topic)", LogKey.offset: "\(message.offset)", LogKey.error: "\(error)",
                        LogKey.failure: "\(failure)", LogKey.attempt: "\(attempts)",
                    ])
            }
            var quarantineReason: String?
            switch failure {
            case .content(let reason):
                quarantineReason = reason
            case .transient:
                _ = health.failed()
                handler.metrics.retrying(true)
                if attempts >= retry.budget, await handler.databaseAnswers() {
                    quarantineReason = "retries_exhausted"
                }
            }
            if let quarantineReason {
                do {
                    try await handler.quarantine(message, reason: quarantineReason)
                    health.recovered()
                    handler.metrics.retrying(false)
                    return true
                } catch {
                    // Quarantine stores only bounded bytes and escaped text: it fails only when
                    // storage does, which is transient; try again after the delay.
                    _ = health.failed()
                    handler.metrics.retrying(true)
                    logger.warning("quarantine failed; retrying", metadata: [LogKey.error: "\(error)"])
                }
            }
            if phase.isStopping { return false }
            try? await Task.sleep(for: backoff.next())
        }
        return false
    }
}
