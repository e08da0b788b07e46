import Foundation
import Logging
import RescindKafka
import ServiceLifecycle
import Synchronization

/// Reads the input topics as a member of the audit service's consumer group, hands
/// each message to the handler and commits its offset once the handler succeeded
/// (at least once; the handler is idempotent).
///
/// A handler failure (storage unavailable) is retried with backoff on the same message,
/// so a partition never skips one. On graceful shutdown the message in hand is finished
/// and committed before the consumer leaves its group.
struct InboundConsumer: Service {
    let configuration: KafkaConsumerConfiguration
    let topics: [String]
    let handler: InboundMessageHandler
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
        let phase = Phase()
        await withGracefulShutdownHandler {
            do {
                for try await message in consumer.messages {
                    guard phase.begin() else { break }
                    if await handleUntilDone(message, phase: phase) {
                        do {
                            try await consumer.commit(message)
                        } catch {
                            logger.warning("offset commit failed; the message will be redelivered", metadata: ["error": "\(error)"])
                        }
                    }
                    if phase.end() { break }
                }
            } catch {
                logger.error("consumer failed", metadata: ["error": "\(error)"])
            }
        } onGracefulShutdown: {
            // Idle: nothing to finish, leave at once. Busy: the loop stops after its commit.
            if phase.stop() { Task { await consumer.close() } }
        }
        await consumer.close()
    }

    /// - Returns: `true` once handled; `false` if shutdown or cancellation came first.
    private func handleUntilDone(_ message: KafkaMessage, phase: Phase) async -> Bool {
        var delay = Duration.milliseconds(100)
        while !Task.isCancelled {
            do {
                try await handler.handle(message)
                return true
            } catch {
                logger.warning(
                    "handling failed; retrying",
                    metadata: ["kafka.topic": "\(message.topic)", "kafka.offset": "\(message.offset)", "error": "\(error)"])
            }
            if phase.isStopping { return false }
            try? await Task.sleep(for: delay)
            delay = min(delay * 2, .seconds(5))
        }
        return false
    }
}
