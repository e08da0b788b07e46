import Foundation
import Logging
import RescindKafka
import RescindPostgres
import RescindServiceSupport
import RescindTracing

extension OutboxRelay<Int64> {
    /// The grant service's relay: the `outbox` rows a commit wrote, each to the topic and key
    /// it names (consumers dedupe by message id: the audit service by `event_id`, agents by
    /// `command_id`). After each drain it records the outbox lag.
    static func grantOutbox(
        pool: PostgresConnectionPool, database: PostgresConfiguration, producer: KafkaProducer,
        settings: GrantServiceConfiguration.Outbox, metrics: GrantMetrics, logger: Logger
    ) -> OutboxRelay<Int64> {
        OutboxRelay(
            outbox: LeasedOutbox(
                pool: pool, table: "outbox", idColumn: "outbox_id", orderColumn: "outbox_id", batchSize: settings.batchSize,
                claimLease: settings.claimLease),
            loop: NotifiedDrainLoop(
                database: database, channels: [OutboxWriter.channel], pollInterval: settings.pollInterval,
                batchSize: settings.batchSize, name: "outbox publish", logger: logger),
            producer: producer, columns: ["outbox_id", "topic", "message_key", "payload", "traceparent", "tracestate"],
            read: { row in
                let (id, topic, key, payload, traceparent, tracestate) = try row.decode(
                    Int64.self, String.self, String.self, Data.self, String?.self, String?.self)
                return Row(
                    order: id, id: id, message: KafkaProducerMessage(topic: topic, key: Data(key.utf8), value: payload),
                    trace: traceparent.flatMap { TraceContext(traceparent: $0, tracestate: tracestate) })
            },
            onDelivered: { metrics.outboxPublished.increment(by: Int64($0)) },
            afterDrain: {
                let lag = try? await pool.withConnection { connection in
                    try await connection.query(
                        "SELECT coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8 FROM outbox WHERE sent_at IS NULL"
                    ).first?.decode(Double.self, column: 0)
                }
                metrics.outboxLag.set(to: lag.flatMap { $0 } ?? 0)
            })
    }
}
