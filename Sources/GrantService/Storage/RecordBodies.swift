import Foundation
import RescindPostgres

/// Record bodies are written once (migration 0014): `record_bodies` holds every ciphertext,
/// records and staged records name theirs by `body_id`. A body no one refers to any more —
/// replaced by a revocation's commit, or staged by a revocation that was abandoned or expired —
/// is queued in `record_body_garbage` in the transaction that let go of it, and deleted by
/// `collect` afterwards (the janitor's sweep). Until then it is invisible: every reader reaches
/// a body through `records.body_id`.
enum RecordBodies {
    /// Bodies deleted per transaction by `collect`.
    static let collectBatch = 5_000

    /// Queues the bodies a staging refers to, before the staging is deleted (abandoned).
    static func queueStaged(of revocationID: UUID, on connection: PostgresConnection) async throws {
        try await connection.execute(
            """
            INSERT INTO record_body_garbage (body_id)
            SELECT body_id FROM staged_records WHERE staging_id = \(revocationID)
            """)
    }

    /// Deletes expired stagings, queueing their bodies in the same transaction. The stagings are
    /// locked first, so an upload still in flight (it holds its staging `FOR KEY SHARE`) ends
    /// before its bodies are queued.
    /// - Returns: how many stagings were deleted.
    @discardableResult
    static func expireStagings(on connection: PostgresConnection) async throws -> Int {
        try await connection.transaction { connection in
            let expired = try await connection.query(
                "SELECT staging_id FROM revocation_stagings WHERE expires_at < now() FOR UPDATE"
            ).map { try $0.decode(UUID.self, column: 0) }
            guard !expired.isEmpty else { return 0 }
            try await delete(stagings: expired, on: connection)
            return expired.count
        }
    }

    /// Abandons every staging `deviceID` began (a retirement, in its transaction): their bodies
    /// queued, their staged rows and the stagings deleted. The stagings are locked first, so an
    /// upload or commit of theirs still in flight ends before (a commit that won: nothing left here).
    /// - Returns: how many stagings were abandoned.
    @discardableResult
    static func abandonStagings(begunBy deviceID: UUID, on connection: PostgresConnection) async throws -> Int {
        let begun = try await connection.query(
            "SELECT staging_id FROM revocation_stagings WHERE started_by_device_id = \(deviceID) FOR UPDATE"
        ).map { try $0.decode(UUID.self, column: 0) }
        guard !begun.isEmpty else { return 0 }
        try await delete(stagings: begun, on: connection)
        return begun.count
    }

    /// Queues the bodies of `stagings` and deletes their staged rows and the stagings (no cascade
    /// since migration 0015), in the caller's transaction, which holds them locked.
    private static func delete(stagings: [UUID], on connection: PostgresConnection) async throws {
        let ids = PostgresArray(stagings)
        try await connection.execute(
            """
            INSERT INTO record_body_garbage (body_id)
            SELECT body_id FROM staged_records WHERE staging_id = ANY(\(ids))
            """)
        try await RecordVersionStore.queueStaged(of: stagings, on: connection)
        try await connection.execute("DELETE FROM staged_records WHERE staging_id = ANY(\(ids))")
        try await connection.execute("DELETE FROM revocation_stagings WHERE staging_id = ANY(\(ids))")
    }

    /// Deletes the queued bodies, `collectBatch` per transaction, until the queue is empty. The
    /// queue has no key (migration 0015: a revocation's commit queues every old body, and an index
    /// on them cost more than the queueing): rows are taken by their physical position, and a
    /// body queued twice is deleted once.
    /// A queued body that a record or a kept version still names (which the write paths never do)
    /// is kept and dropped from the queue: deleting it would lose the record.
    /// - Returns: how many bodies were deleted.
    @discardableResult
    static func collect(on connection: PostgresConnection) async throws -> Int {
        var total = 0
        while true {
            let (dequeued, deleted) = try await connection.transaction { connection in
                try await connection.query(
                    """
                    WITH batch AS (
                        DELETE FROM record_body_garbage WHERE ctid = ANY(ARRAY(
                            SELECT ctid FROM record_body_garbage LIMIT \(collectBatch) FOR UPDATE SKIP LOCKED))
                        RETURNING body_id),
                    gone AS (
                        DELETE FROM record_bodies b USING batch
                        WHERE b.body_id = batch.body_id
                          AND NOT EXISTS (SELECT 1 FROM records r WHERE r.body_id = b.body_id)
                          AND NOT EXISTS (SELECT 1 FROM record_versions v WHERE v.body_id = b.body_id)
                        RETURNING 1)
                    SELECT (SELECT count(*) FROM batch), (SELECT count(*) FROM gone)
                    """
                ).first!.decode(Int.self, Int.self)
            }
            total += deleted
            if dequeued < collectBatch { return total }
        }
    }
}
