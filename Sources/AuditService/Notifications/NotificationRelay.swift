import Foundation
import Logging
import RescindKafka
import RescindPostgres
import RescindServiceSupport
import ServiceLifecycle

/// Publishes the notification outbox to `audit_notifications` (command re-issues to
/// `device_commands`, keyed by device) in creation order and
/// marks rows sent once Kafka acknowledged them; a crash in between re-sends, and
/// consumers dedupe by `notification_id`. Wakes on the outbox NOTIFY, and polls as a
/// safety net (`NotifiedDrainLoop`).
///
/// As the grant service's outbox relay: a batch is claimed in one short statement
/// (`FOR UPDATE SKIP LOCKED`, then a lease in `claimed_until`, so replicas share the work),
/// published with no transaction open and no pool connection held, and marked sent in a
/// second short statement; a broker outage holds no database resource hostage. Rows whose
/// delivery failed are released at once; a crashed relay's claim expires after `claimLease`.
struct NotificationRelay: Service {
    let pool: PostgresConnectionPool
    let database: PostgresConfiguration
    let producer: KafkaProducer
    let topic: String
    /// Where rows marked `destination = 'device_commands'` (command re-issues) go, keyed by device.
    let commandsTopic: String
    let batchSize: Int
    let pollInterval: Duration
    /// Longer than the producer's message timeout, so a live relay's batch is never taken from it.
    let claimLease: Duration
    let metrics: AuditMetrics
    let logger: Logger

    func run() async throws {
        let loop = NotifiedDrainLoop(
            database: database, channels: [ConclusionWriter.outboxChannel], pollInterval: pollInterval,
            batchSize: batchSize, name: "notification publish", logger: logger)
        try await loop.run(batch: publishBatch)
        // What the last handled messages concluded goes out before the producer closes.
        await loop.drain(batch: publishBatch)
        await producer.shutdown()
    }

    /// - Returns: how many rows were claimed.
    func publishBatch() async throws -> Int {
        let leaseMilliseconds = Int64(claimLease.components.seconds) * 1000 + claimLease.components.attoseconds / 1_000_000_000_000_000
        let rows = try await pool.withConnection { connection in
            try await connection.query(
                """
                UPDATE notification_outbox SET claimed_until = now() + \(leaseMilliseconds) * interval '1 millisecond'
                WHERE notification_id IN (
                    SELECT notification_id FROM notification_outbox
                    WHERE sent_at IS NULL AND (claimed_until IS NULL OR claimed_until < now())
                    ORDER BY seq LIMIT \(batchSize) FOR UPDATE SKIP LOCKED)
                RETURNING seq, notification_id, family_member_id, envelope, destination, message_key
                """
            ).map { try $0.decode(Int64.self, UUID.self, UUID?.self, Data.self, String?.self, UUID?.self) }
        }.sorted { $0.0 < $1.0 }
        guard !rows.isEmpty else { return 0 }
        // No connection is held while the producer waits for the broker.
        let results = await producer.send(
            rows.map { _, _, familyMemberID, envelope, destination, messageKey in
                KafkaProducerMessage(
                    topic: destination == "device_commands" ? commandsTopic : topic,
                    key: (messageKey ?? familyMemberID).map { Data($0.uuidString.lowercased().utf8) }, value: envelope)
            })
        var delivered: [UUID] = []
        var failed: [UUID] = []
        for (row, result) in zip(rows, results) {
            if case .success = result { delivered.append(row.1) } else { failed.append(row.1) }
        }
        try await pool.withConnection { connection in
            if !delivered.isEmpty {
                try await connection.execute(
                    """
                    UPDATE notification_outbox SET sent_at = now(), claimed_until = NULL
                    WHERE notification_id = ANY(\(PostgresArray(delivered)))
                    """)
            }
            if !failed.isEmpty {
                try await connection.execute(
                    """
                    UPDATE notification_outbox SET claimed_until = NULL
                    WHERE notification_id = ANY(\(PostgresArray(failed))) AND sent_at IS NULL
                    """)
            }
        }
        metrics.notificationsPublished.increment(by: Int64(delivered.count))
        if !failed.isEmpty {
            throw AuditServiceError.notificationsUndelivered(failed.count)
        }
        return rows.count
    }
}
