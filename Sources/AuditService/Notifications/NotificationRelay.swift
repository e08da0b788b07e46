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
/// safety net (`NotifiedDrainLoop`). Rows are claimed with `SKIP LOCKED`, so replicas
/// share the work.
struct NotificationRelay: Service {
    let pool: PostgresConnectionPool
    let database: PostgresConfiguration
    let producer: KafkaProducer
    let topic: String
    /// Where rows marked `destination = 'device_commands'` (command re-issues) go, keyed by device.
    let commandsTopic: String
    let batchSize: Int
    let pollInterval: Duration
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
        try await pool.transaction { connection in
            let rows = try await connection.query(
                """
                SELECT notification_id, family_member_id, envelope, destination, message_key FROM notification_outbox
                WHERE sent_at IS NULL ORDER BY seq LIMIT \(batchSize) FOR UPDATE SKIP LOCKED
                """
            ).map { try $0.decode(UUID.self, UUID?.self, Data.self, String?.self, UUID?.self) }
            guard !rows.isEmpty else { return 0 }
            let results = await producer.send(
                rows.map { _, familyMemberID, envelope, destination, messageKey in
                    KafkaProducerMessage(
                        topic: destination == "device_commands" ? commandsTopic : topic,
                        key: (messageKey ?? familyMemberID).map { Data($0.uuidString.lowercased().utf8) }, value: envelope)
                })
            let delivered = zip(rows, results).compactMap { row, result in (try? result.get()).map { _ in row.0 } }
            for id in delivered {
                try await connection.execute("UPDATE notification_outbox SET sent_at = now() WHERE notification_id = \(id)")
            }
            metrics.notificationsPublished.increment(by: Int64(delivered.count))
            if delivered.count < rows.count {
                throw AuditServiceError.notificationsUndelivered(rows.count - delivered.count)
            }
            return rows.count
        }
    }
}
