import Foundation
import Logging
import RescindObservability
import RescindPostgres
import RescindServiceSupport
import ServiceLifecycle

/// Periodic clean-up of what the audit service keeps that no revocation needs: rejected messages
/// and their hourly counts older than `retention`, and notifications published more than a day
/// ago. Refreshes the quarantine's storage gauges.
struct AuditJanitor: Sendable {
    let pool: PostgresConnectionPool
    let retention: Duration
    let metrics: AuditMetrics
    let logger: Logger

    /// Rows deleted per statement, so that no sweep holds a long transaction.
    static let batch = 5_000

    /// One pass; the application runs it every janitor interval (`PeriodicService`).
    /// - Returns: how many rejected messages were deleted.
    @discardableResult
    func sweep() async throws -> Int {
        let seconds = retention.seconds
        let pruned = try await deleteInBatches(
            """
            DELETE FROM rejected_messages WHERE rejection_id IN (
                SELECT rejection_id FROM rejected_messages
                WHERE received_at < now() - make_interval(secs => \(seconds)) LIMIT \(Self.batch))
            """)
        try await pool.withConnection { connection in
            try await connection.execute(
                "DELETE FROM rejection_tallies WHERE window_start < date_trunc('hour', now() - make_interval(secs => \(seconds)))")
        }
        _ = try await deleteInBatches(
            """
            DELETE FROM notification_outbox WHERE notification_id IN (
                SELECT notification_id FROM notification_outbox
                WHERE sent_at < now() - interval '1 day' LIMIT \(Self.batch))
            """)
        if pruned > 0 { logger.info("pruned rejected messages past retention", metadata: [LogKey.entries: "\(pruned)"]) }
        let (rows, bytes) = try await pool.withConnection { connection in
            try await connection.query(
                "SELECT coalesce(sum(stored), 0)::bigint, coalesce(sum(stored_bytes), 0)::bigint FROM rejection_tallies"
            ).first!.decode(Int.self, Int.self)
        }
        metrics.rejectedStoredRows.set(to: Double(rows))
        metrics.rejectedStoredBytes.set(to: Double(bytes))
        return pruned
    }

    private func deleteInBatches(_ statement: PostgresQuery) async throws -> Int {
        var total = 0
        while true {
            let deleted = try await pool.withConnection { try await $0.execute(statement) }
            total += deleted
            if deleted < Self.batch { return total }
        }
    }
}
