import Foundation
import Logging
import RescindKafka
import RescindPostgres
import RescindServiceSupport
import RescindTracing
import ServiceLifecycle

/// Publishes the notification outbox to `audit_notifications` (command re-issues to
/// `device_commands`, keyed by device) in creation order and
/// marks rows sent once Kafka acknowledged them; a crash in between re-sends, and
/// consumers dedupe by `notification_id`. Wakes on the outbox NOTIFY, and polls as a
/// safety net (`NotifiedDrainLoop`). A row with a trace context (a traced re-issue) is
/// published under a `relay publish` span of that trace, whose context its headers carry.
///
/// As the grant service's outbox relay (`LeasedOutbox`): a batch is claimed under a lease
/// (replicas share the work), published with no transaction open and no pool connection held,
/// and marked sent; a broker outage holds no database resource hostage. Rows whose delivery
/// failed are released at once; a crashed relay's claim expires after `claimLease`.
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

    /// Publishes until the outbox is drained, claiming each next batch while the current one
    /// is published (`LeasedOutbox.publishBatches`).
    /// - Returns: how many rows the last batch claimed (short of `batchSize`: drained).
    func publishBatch() async throws -> Int {
        let outbox = LeasedOutbox<UUID>(
            pool: pool, table: "notification_outbox", idColumn: "notification_id", orderColumn: "seq", batchSize: batchSize,
            claimLease: claimLease)
        let batch = try await outbox.publishBatches(
            returning: ["seq", "notification_id", "family_member_id", "envelope", "destination", "message_key", "traceparent", "tracestate"]
        ) { row in
            let (seq, id, familyMemberID, envelope, destination, messageKey, traceparent, tracestate) = try row.decode(
                Int64.self, UUID.self, UUID?.self, Data.self, String?.self, UUID?.self, String?.self, String?.self)
            let message = KafkaProducerMessage(
                topic: destination == "device_commands" ? commandsTopic : topic,
                key: (messageKey ?? familyMemberID).map { Data($0.uuidString.lowercased().utf8) }, value: envelope)
            return (
                seq, id,
                KafkaProducer.TracedMessage(
                    message, parent: .continuing(traceparent.flatMap { TraceContext(traceparent: $0, tracestate: tracestate) }),
                    spanName: "relay publish")
            )
        } publish: { messages in
            await producer.send(messages)
        }
        metrics.notificationsPublished.increment(by: Int64(batch.delivered))
        if batch.failed > 0 {
            throw AuditServiceError.notificationsUndelivered(batch.failed)
        }
        return batch.lastClaimed
    }
}
