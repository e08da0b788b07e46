import Foundation
import Logging
import RescindKafka
import RescindPostgres
import RescindServiceSupport
import RescindTracing

extension OutboxRelay<UUID> {
    /// The audit service's relay: the notification outbox to `audit_notifications` (command
    /// re-issues to `device_commands`, keyed by device) in creation order; consumers dedupe by
    /// `notification_id`. Once graceful shutdown stopped its loop it drains once more, so what
    /// the last handled messages concluded goes out before the producer closes.
    static func notifications(
        pool: PostgresConnectionPool, database: PostgresConfiguration, producer: KafkaProducer, topics: TopicNames,
        settings: AuditServiceConfiguration.Notifications, metrics: AuditMetrics, logger: Logger
    ) -> OutboxRelay<UUID> {
        let (notificationsTopic, commandsTopic) = (topics.name(.auditNotifications), topics.name(.deviceCommands))
        return OutboxRelay(
            outbox: LeasedOutbox(
                pool: pool, table: "notification_outbox", idColumn: "notification_id", orderColumn: "seq",
                batchSize: settings.batchSize, claimLease: settings.claimLease),
            loop: NotifiedDrainLoop(
                database: database, channels: [ConclusionWriter.outboxChannel], pollInterval: settings.pollInterval,
                batchSize: settings.batchSize, name: "notification publish", logger: logger),
            producer: producer,
            columns: ["seq", "notification_id", "family_member_id", "envelope", "destination", "message_key", "traceparent", "tracestate"],
            read: { row in
                let (seq, id, familyMemberID, envelope, destination, messageKey, traceparent, tracestate) = try row.decode(
                    Int64.self, UUID.self, UUID?.self, Data.self, String?.self, UUID?.self, String?.self, String?.self)
                // Rows marked `destination = 'device_commands'` (command re-issues) go there, keyed by device.
                let message = KafkaProducerMessage(
                    topic: destination == "device_commands" ? commandsTopic : notificationsTopic,
                    key: (messageKey ?? familyMemberID).map { Data($0.uuidString.lowercased().utf8) }, value: envelope)
                return Row(
                    order: seq, id: id, message: message, trace: traceparent.flatMap { TraceContext(traceparent: $0, tracestate: tracestate) })
            },
            onDelivered: { metrics.notificationsPublished.increment(by: Int64($0)) },
            drainsOnShutdown: true)
    }
}
