import Foundation
import Logging
import RescindServiceSupport
import RescindPostgres
import ServiceLifecycle

/// Periodic work that no message triggers: devices past their deadline become overdue
/// (reported once), held acks are applied or expired, old stream events are dropped,
/// and the gauges are refreshed from PostgreSQL (so every replica reports the same).
struct DeadlineMonitor: Service {
    let pool: PostgresConnectionPool
    let tracker: RevocationTracker
    let writer: ConclusionWriter
    let handler: InboundMessageHandler
    let interval: Duration
    let pendingAckLifetime: Duration
    let streamRetention: Duration
    let metrics: AuditMetrics
    let logger: Logger

    /// Scans every `interval` (`PeriodicService`).
    func run() async throws {
        try await PeriodicService(name: "deadline scan", interval: interval, logger: logger) { try await scan() }.run()
    }

    func scan() async throws {
        let conclusions = try await pool.transaction { connection in
            var conclusions = Conclusions()
            try await tracker.markOverdue(on: connection, into: &conclusions)
            try await tracker.sweepHeldAcks(lifetime: pendingAckLifetime, on: connection, into: &conclusions)
            try await writer.write(conclusions, on: connection)
            return conclusions
        }
        handler.record(conclusions)
        try await pool.withConnection { connection in
            try await connection.execute(
                "DELETE FROM stream_events WHERE created_at < now() - make_interval(secs => \(streamRetention.seconds))")
            let (pending, overdue, open, held, unsent) = try await connection.query(
                """
                SELECT (SELECT count(*) FROM revocation_devices WHERE state IN ('pending', 'overdue')),
                       (SELECT count(*) FROM revocation_devices WHERE state = 'overdue'),
                       (SELECT count(*) FROM revocations WHERE completed_at IS NULL),
                       (SELECT count(*) FROM pending_acks),
                       (SELECT count(*) FROM notification_outbox WHERE sent_at IS NULL)
                """
            ).first!.decode(Int.self, Int.self, Int.self, Int.self, Int.self)
            metrics.pendingAcks.set(to: Double(pending))
            metrics.overdueAcks.set(to: Double(overdue))
            metrics.openRevocations.set(to: Double(open))
            metrics.unverifiedAcks.set(to: Double(held))
            metrics.unsentNotifications.set(to: Double(unsent))
        }
    }
}
