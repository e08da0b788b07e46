import Foundation
import Logging
import RescindKafka
import RescindPostgres
import RescindServiceSupport
import RescindTracing
import ServiceLifecycle
import Tracing

/// Publishes committed outbox rows to Kafka and marks them sent only after the
/// broker acknowledged them.
///
/// A batch is claimed, published with no transaction open and no pool connection held, and
/// marked sent (`LeasedOutbox`, shared with the audit service's relay): a broker outage holds
/// no database resource hostage while the producer waits for its send timeout,
/// several replicas share the work, a row whose delivery failed is released at once,
/// and a crashed relay's claim expires after `claimLease`. At-least-once: consumers dedupe by message id (the audit service
/// by `event_id`, agents by `command_id`). The relay wakes on the outbox NOTIFY and, as a
/// safety net, every `pollInterval` (`NotifiedDrainLoop`); after each drain it records the
/// outbox lag. A row written with a trace context is published under a producer span of that
/// trace (`relay publish`), whose context the message's headers carry on.
struct OutboxRelay: Service {
    let pool: PostgresConnectionPool
    let database: PostgresConfiguration
    let producer: KafkaProducer
    let batchSize: Int
    let pollInterval: Duration
    /// How long a claim keeps other replicas off a batch; longer than the producer's
    /// message timeout, so that a live relay's batch is never taken from it.
    let claimLease: Duration
    let metrics: GrantMetrics
    let logger: Logger

    func run() async throws {
        let loop = NotifiedDrainLoop(
            database: database, channels: [OutboxWriter.channel], pollInterval: pollInterval, batchSize: batchSize,
            name: "outbox publish", logger: logger)
        try await loop.run(batch: publishBatch, afterDrain: recordLag)
        await producer.shutdown()
    }

    /// Publishes until the outbox is drained, claiming each next batch while the current one
    /// is published (`LeasedOutbox.publishBatches`).
    /// - Returns: how many rows the last batch claimed (short of `batchSize`: drained).
    func publishBatch() async throws -> Int {
        let outbox = LeasedOutbox<Int64>(
            pool: pool, table: "outbox", idColumn: "outbox_id", orderColumn: "outbox_id", batchSize: batchSize,
            claimLease: claimLease)
        let batch = try await outbox.publishBatches(
            returning: ["outbox_id", "topic", "message_key", "payload", "traceparent", "tracestate"]
        ) { row in
            let (id, topic, key, payload, traceparent, tracestate) = try row.decode(
                Int64.self, String.self, String.self, Data.self, String?.self, String?.self)
            let message = KafkaProducerMessage(topic: topic, key: Data(key.utf8), value: payload)
            return (
                id, id,
                KafkaProducer.TracedMessage(
                    message, parent: .continuing(traceparent.flatMap { TraceContext(traceparent: $0, tracestate: tracestate) }),
                    spanName: "relay publish")
            )
        } publish: { messages in
            await producer.send(messages)
        }
        metrics.outboxPublished.increment(by: Int64(batch.delivered))
        if batch.failed > 0 {
            throw OutboxRelayError.deliveryFailed(failed: batch.failed, first: batch.firstFailure ?? "")
        }
        return batch.lastClaimed
    }

    private func recordLag() async {
        let lag = try? await pool.withConnection { connection in
            try await connection.query(
                "SELECT coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8 FROM outbox WHERE sent_at IS NULL"
            ).first?.decode(Double.self, column: 0)
        }
        metrics.outboxLag.set(to: lag.flatMap { $0 } ?? 0)
    }
}

enum OutboxRelayError: Error, CustomStringConvertible {
    case deliveryFailed(failed: Int, first: String)

    var description: String {
        switch self {
        case .deliveryFailed(let failed, let first): "\(failed) outbox message(s) were not acknowledged by Kafka: \(first)"
        }
    }
}
