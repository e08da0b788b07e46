import Foundation
import Logging
import RescindKafka
import RescindPostgres
import RescindServiceSupport
import ServiceLifecycle

/// Publishes committed outbox rows to Kafka and marks them sent only after the
/// broker acknowledged them.
///
/// Rows are claimed with `FOR UPDATE SKIP LOCKED`, so several replicas share the
/// work without sending a row twice in normal operation; a crash between
/// delivery and marking re-sends, which consumers absorb (they dedupe by id).
/// The relay wakes on the outbox NOTIFY and, as a safety net, every `pollInterval`
/// (`NotifiedDrainLoop`); after each drain it records the outbox lag.
struct OutboxRelay: Service {
    let pool: PostgresConnectionPool
    let database: PostgresConfiguration
    let producer: KafkaProducer
    let batchSize: Int
    let pollInterval: Duration
    let metrics: GrantMetrics
    let logger: Logger

    func run() async throws {
        let loop = NotifiedDrainLoop(
            database: database, channels: [OutboxWriter.channel], pollInterval: pollInterval, batchSize: batchSize,
            name: "outbox publish", logger: logger)
        try await loop.run(batch: publishBatch, afterDrain: recordLag)
        await producer.shutdown()
    }

    /// - Returns: how many rows were claimed.
    func publishBatch() async throws -> Int {
        try await pool.transaction { connection in
            let rows = try await connection.query(
                """
                SELECT outbox_id, topic, message_key, payload FROM outbox
                WHERE sent_at IS NULL ORDER BY outbox_id LIMIT \(batchSize) FOR UPDATE SKIP LOCKED
                """)
            guard !rows.isEmpty else { return 0 }
            var ids: [Int64] = []
            var messages: [KafkaProducerMessage] = []
            for row in rows {
                let (id, topic, key, payload) = try row.decode(Int64.self, String.self, String.self, Data.self)
                ids.append(id)
                messages.append(KafkaProducerMessage(topic: topic, key: Data(key.utf8), value: payload))
            }
            let results = await producer.send(messages)
            let delivered = zip(ids, results).compactMap { id, result in (try? result.get()).map { _ in id } }
            if !delivered.isEmpty {
                try await connection.execute(
                    """
                    UPDATE outbox SET sent_at = now()
                    WHERE outbox_id = ANY(\(PostgresArray(delivered)))
                    """)
                metrics.outboxPublished.increment(by: Int64(delivered.count))
            }
            if delivered.count < ids.count {
                let failure = results.first { if case .failure = $0 { true } else { false } }
                throw OutboxRelayError.deliveryFailed(failed: ids.count - delivered.count, first: "\(failure.map { "\($0)" } ?? "")")
            }
            return rows.count
        }
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
