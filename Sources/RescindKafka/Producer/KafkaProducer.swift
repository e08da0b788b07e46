import Foundation
import Logging
import RescindObservability

/// An idempotent Kafka producer (`enable.idempotence=true`, `acks=all`).
///
/// `send` returns only once the broker acknowledged the message, so a caller such as
/// the outbox relay may mark a row as sent exactly when `send` returns. Retries inside
/// librdkafka never duplicate or reorder messages of a partition.
///
/// Threads: one dedicated thread per producer polls librdkafka's main queue for
/// delivery reports, errors and logs; `flush` runs on a private dispatch queue.
/// Neither ever blocks Swift's cooperative pool. Call `shutdown()` before dropping
/// the producer to deliver what is still queued.
public final class KafkaProducer: Sendable {
    let handle: RDKafkaHandle
    let deliveries = DeliveryRegistry()
    private let pollThread: PollThread
    private let blocking = BlockingExecutor(label: "rescind.kafka.producer.blocking")
    private let shutdownState = ShutdownState()
    private let logger: Logger

    /// - Throws: `KafkaError` `.configuration` for a rejected property, `.clientCreation`
    ///   when librdkafka refuses the combination. Connecting happens in the background:
    ///   an unreachable cluster shows up as delivery failures, not here.
    public init(configuration: KafkaProducerConfiguration, logger: Logger) throws {
        let handle = try RDKafkaHandle(
            kind: .producer,
            properties: configuration.properties,
            events: [.deliveryReports, .errors, .logs],
            logsOnMainQueue: true
        )
        let mainQueue = RDKafkaQueue.main(of: handle)
        let deliveries = self.deliveries
        self.handle = handle
        self.logger = logger
        pollThread = PollThread(
            name: "rescind-kafka-producer",
            step: {
                Self.serve(mainQueue, deliveries: deliveries, logger: logger)
                return true
            },
            onExit: {}
        )
    }

    deinit {
        // The thread holds its own reference to the handle; it destroys it when it ends.
        pollThread.requestStop()
    }

    /// Sends one message and waits for the broker's acknowledgement.
    ///
    /// The partition is chosen from `key` (murmur2, as the Java client does), so every
    /// message of one key lands in one partition, in send order.
    /// Cancelling the calling task does not withdraw the message: it may still be delivered.
    /// - Returns: the partition and offset the broker stored the message at.
    /// - Throws: `KafkaError` `.enqueue` when librdkafka refuses the message at once
    ///   (local queue full, message too large, fatal producer state), `.delivery` when it
    ///   was not acknowledged (`_MSG_TIMED_OUT` after `messageTimeout`, a permanent broker
    ///   error such as `TOPIC_AUTHORIZATION_FAILED`, `_PURGE_QUEUE` at shutdown), and
    ///   `.shutdown` after `shutdown()`.
    public func send(topic: String, key: Data?, value: Data?, headers: [KafkaHeader] = []) async throws -> KafkaDelivery {
        let message = KafkaProducerMessage(topic: topic, key: key, value: value, headers: headers)
        return try await withCheckedThrowingContinuation { continuation in
            submit(message) { continuation.resume(with: $0) }
        }
    }

    /// Sends messages in array order and waits for every acknowledgement.
    ///
    /// All messages are queued before the first report is awaited, so a batch costs
    /// about one round trip, and messages of one key keep their array order (which
    /// concurrent single `send` calls from several tasks would not guarantee). The
    /// outbox relay publishes its rows this way.
    /// - Returns: one result per message, in array order; a failure carries the same
    ///   `KafkaError` single `send` would throw.
    public func send(_ messages: [KafkaProducerMessage]) async -> [Result<KafkaDelivery, KafkaError>] {
        guard !messages.isEmpty else { return [] }
        return await withCheckedContinuation { continuation in
            let collector = BatchCollector(count: messages.count, continuation: continuation)
            for (index, message) in messages.enumerated() {
                submit(message) { collector.set(index, $0) }
            }
        }
    }

    /// Waits until every queued message has been acknowledged or has failed.
    /// - Throws: `KafkaError` `.flush` (`_TIMED_OUT`) when messages are still outstanding after `timeout`.
    public func flush(timeout: Duration) async throws {
        let handle = self.handle
        let milliseconds = timeout.clampedMilliseconds
        let result = try await blocking.run {
            handle.flush(timeoutMilliseconds: milliseconds)
        }
        guard result == .noError else {
            throw KafkaError(code: .flush, rdKafka: result)
        }
    }

    /// Stops accepting messages, flushes for up to `timeout`, fails what is still
    /// queued after that (`_PURGE_QUEUE`), and stops the poll thread. Safe to call twice.
    public func shutdown(timeout: Duration = .seconds(10)) async {
        guard shutdownState.begin() else {
            await pollThread.waitUntilExited()
            return
        }
        deliveries.close()
        do {
            try await flush(timeout: timeout)
        } catch {
            logger.warning("producer shutdown: flush timed out, failing undelivered messages", metadata: [LogKey.error: "\(error)"])
            handle.purgeQueuedAndInFlight()
            // The purged messages' reports go through the poll thread like any other.
            try? await flush(timeout: .seconds(5))
        }
        pollThread.requestStop()
        await pollThread.waitUntilExited()
        deliveries.failAll(with: KafkaError(code: .shutdown, detail: "the producer was shut down"))
    }
}
