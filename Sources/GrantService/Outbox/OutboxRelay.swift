import Foundation
import Logging
import RescindKafka
import RescindPostgres
import RescindServiceSupport
import ServiceLifecycle

/// Publishes committed outbox rows to Kafka and marks them sent only after the
/// broker acknowledged them.
///
/// A batch is claimed in one short statement (`FOR UPDATE SKIP LOCKED`, then a lease in
/// `claimed_until`), published with no transaction open and no pool connection held, and
/// marked sent in a second short statement. So a broker outage holds no database resource
/// hostage while the producer waits for its send timeout (issue 18, item 4), and several
/// replicas share the work without sending a row twice in normal operation. A row whose
/// delivery failed is released at once for the next attempt; a relay that crashed between
/// claiming and marking leaves its rows claimed until `claimLease` passes, after which any
/// replica re-sends them. At-least-once: consumers dedupe by message id (the audit service
/// by `event_id`, agents by `command_id`). The relay wakes on the outbox NOTIFY and, as a
/// safety net, every `pollInterval` (`NotifiedDrainLoop`); after each drain it records the
/// outbox lag.
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

    /// - Returns: how many rows were claimed.
    func publishBatch() async throws -> Int {
        let leaseMilliseconds = Int64(claimLease.components.seconds) * 1000 + claimLease.components.attoseconds / 1_000_000_000_000_000
        // One statement, its own transaction: the row locks last only as long as the claim.
        let rows = try await pool.withConnection { connection in
            try await connection.query(
                """
                UPDATE outbox SET claimed_until = now() + \(leaseMilliseconds) * interval '1 millisecond'
                WHERE outbox_id IN (
                    SELECT outbox_id FROM outbox
                    WHERE sent_at IS NULL AND (claimed_until IS NULL OR claimed_until < now())
                    ORDER BY outbox_id LIMIT \(batchSize) FOR UPDATE SKIP LOCKED)
                RETURNING outbox_id, topic, message_key, payload
                """
            ).map { try $0.decode(Int64.self, String.self, String.self, Data.self) }
        }.sorted { $0.0 < $1.0 }
        guard !rows.isEmpty else { return 0 }
        // No connection is held while the producer waits for the broker.
        let results = await producer.send(
            rows.map { _, topic, key, payload in KafkaProducerMessage(topic: topic, key: Data(key.utf8), value: payload) })
        var delivered: [Int64] = []
        var failed: [Int64] = []
        for (row, result) in zip(rows, results) {
            if case .success = result { delivered.append(row.0) } else { failed.append(row.0) }
        }
        try await pool.withConnection { connection in
            if !delivered.isEmpty {
                try await connection.execute(
                    """
                    UPDATE outbox SET sent_at = now(), claimed_until = NULL
                    WHERE outbox_id = ANY(\(PostgresArray(delivered)))
                    """)
            }
            if !failed.isEmpty {
                // Released for the next attempt rather than left to the lease.
                try await connection.execute(
                    "UPDATE outbox SET claimed_until = NULL WHERE outbox_id = ANY(\(PostgresArray(failed))) AND sent_at IS NULL")
            }
        }
        metrics.outboxPublished.increment(by: Int64(delivered.count))
        if !failed.isEmpty {
            let failure = results.first { if case .failure = $0 { true } else { false } }
            throw OutboxRelayError.deliveryFailed(failed: failed.count, first: "\(failure.map { "\($0)" } ?? "")")
        }
        return rows.count
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
