import Foundation
import Logging
import RescindServiceSupport
import RescindPostgres
import ServiceLifecycle

/// Periodic work that no message triggers: devices past their deadline become overdue
/// (reported once), failed and overdue devices are re-issued their command (with backoff, up to
/// the configured attempts), held acks are applied or expired, old stream events are dropped,
/// and the gauges are refreshed from PostgreSQL (so every replica reports the same).
struct DeadlineMonitor: Sendable {
    let pool: PostgresConnectionPool
    let tracker: RevocationTracker
    let writer: ConclusionWriter
    let handler: InboundMessageHandler
    let pendingAckLifetime: Duration
    let streamRetention: Duration
    let reissue: RevocationTracker.ReissuePolicy
    let metrics: AuditMetrics
    let logger: Logger

    /// One pass; the application runs it every scan interval (`PeriodicService`).
    func scan() async throws {
        let conclusions = try await pool.transaction { connection in
            var conclusions = Conclusions()
            try await tracker.markOverdue(on: connection, into: &conclusions)
            try await tracker.reissue(reissue, on: connection, into: &conclusions)
            try await tracker.sweepHeldAcks(lifetime: pendingAckLifetime, on: connection, into: &conclusions)
            try await writer.write(conclusions, on: connection)
            return conclusions
        }
        handler.record(conclusions)
        try await pool.withConnection { connection in
            try await connection.execute(
                "DELETE FROM stream_events WHERE created_at < now() - make_interval(secs => \(streamRetention.seconds))")
            let (pending, overdue, open, held, unsent, heldBytes) = try await connection.query(
                """
                SELECT (SELECT count(*) FROM revocation_devices WHERE state IN ('pending', 'delivered', 'not_now', 'overdue', 'reissued')),
                       (SELECT count(*) FROM revocation_devices WHERE state = 'overdue'),
                       (SELECT count(*) FROM revocations WHERE completed_at IS NULL),
                       (SELECT count(*) FROM pending_acks),
                       (SELECT count(*) FROM notification_outbox WHERE sent_at IS NULL),
                       (SELECT coalesce(sum(length(envelope)), 0)::bigint FROM pending_acks)
                """
            ).first!.decode(Int.self, Int.self, Int.self, Int.self, Int.self, Int.self)
            metrics.pendingAcks.set(to: Double(pending))
            metrics.overdueAcks.set(to: Double(overdue))
            metrics.openRevocations.set(to: Double(open))
            metrics.unverifiedAcks.set(to: Double(held))
            metrics.unverifiedAckBytes.set(to: Double(heldBytes))
            metrics.unsentNotifications.set(to: Double(unsent))
            let states = Dictionary(
                uniqueKeysWithValues: try await connection.query(
                    """
                    SELECT d.state, count(*) FROM revocation_devices d JOIN revocations r USING (event_id)
                    WHERE r.completed_at IS NULL GROUP BY d.state
                    """
                ).map { try $0.decode(String.self, Int.self) })
            for state in DeviceAckState.allCases {
                metrics.deviceCommands(state.rawValue, count: states[state.rawValue] ?? 0)
            }
        }
    }
}
