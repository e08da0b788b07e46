import RescindObservability
import RescindPostgres

/// The claim → publish → mark cycle of an outbox table, shared by both services' relays (the
/// grant service's `outbox`, the audit service's `notification_outbox`).
///
/// A batch is claimed in one short statement (`FOR UPDATE SKIP LOCKED`, then a lease in
/// `claimed_until`), handed to `publish` with no transaction open and no pool connection held,
/// and marked in a second short statement: the rows `publish` delivered get `sent_at`, the
/// others are released at once for the next attempt. So a broker outage holds no database
/// resource hostage while the producer waits for its send timeout, and replicas share the work
/// without sending a row twice in normal operation. A relay that dies between claiming and
/// marking leaves its rows claimed until `claimLease` passes; then any replica re-sends them
/// (at-least-once: consumers dedupe).
///
/// The table needs `sent_at` and `claimed_until` (timestamptz, NULL when unsent / unclaimed),
/// an id column and an order column (which may be the same).
public struct LeasedOutbox<ID: PostgresArrayElement & PostgresDecodable>: Sendable {
    public let pool: PostgresConnectionPool
    /// Table and column names: trusted SQL, never input.
    public let table: String
    public let idColumn: String
    /// Rows are claimed, and handed to `publish`, in this column's order.
    public let orderColumn: String
    public let batchSize: Int
    /// How long a claim keeps other replicas off a batch; longer than the producer's message
    /// timeout, so that a live relay's batch is never taken from it.
    public let claimLease: Duration

    public init(
        pool: PostgresConnectionPool, table: String, idColumn: String, orderColumn: String, batchSize: Int,
        claimLease: Duration
    ) {
        self.pool = pool
        self.table = table
        self.idColumn = idColumn
        self.orderColumn = orderColumn
        self.batchSize = batchSize
        self.claimLease = claimLease
    }

    /// What one batch came to.
    public struct Batch: Sendable, Equatable {
        /// Rows claimed: `batchSize` means more may be waiting.
        public var claimed: Int
        public var delivered: Int
        /// Rows `publish` did not deliver, released for the next attempt.
        public var failed: Int
        /// The first failure `publish` reported, described (for the relay's error).
        public var firstFailure: String?
    }

    /// Claims at most `batchSize` unsent, unclaimed (or lease-expired) rows, hands them to
    /// `publish` in `orderColumn` order, then marks the delivered ones sent and releases the rest.
    /// - Parameters:
    ///   - columns: the columns to return, the order column and the id column among them.
    ///   - decode: a returned row's order, id and message.
    ///   - publish: one result per message, in order; runs with no connection held.
    /// - Throws: what the two statements or `decode` throw; a failed delivery is not thrown but
    ///   counted in the result.
    public func publishBatch<Message: Sendable, Delivery, Failure: Error>(
        returning columns: [String],
        decode: @escaping @Sendable (PostgresRow) throws -> (order: Int64, id: ID, message: Message),
        publish: ([Message]) async -> [Result<Delivery, Failure>]
    ) async throws -> Batch {
        let rows = try await claim(columns, decode)
        return try await publishAndMark(rows, publish)
    }

    /// Publishes batch after batch until one comes back short of `batchSize` (the table is
    /// drained) or has a delivery that failed, **claiming the next batch while the current one
    /// is published and marked**: a relay's pace is then the slower of the database and the
    /// broker, not their sum (docs/benchmarks.md, the outbox relay). Batches are still published one
    /// after the other, in `orderColumn` order: the next one reaches `publish` only once every
    /// message of the current one was acknowledged. When a delivery fails, the batch claimed
    /// ahead is released unpublished, with the failed rows, so the next attempt starts again at
    /// the first row not sent, as `publishBatch` does.
    /// - Returns: the totals over every batch; `claimed` of the last batch in `lastClaimed`
    ///   (`batchSize` only when a failure stopped the drain early).
    /// - Throws: what the statements or `decode` throw. The batch claimed ahead is released
    ///   first when it can be; when it cannot, its lease lets any relay take it once it passed.
    public func publishBatches<Message: Sendable, Delivery, Failure: Error>(
        returning columns: [String],
        decode: @escaping @Sendable (PostgresRow) throws -> (order: Int64, id: ID, message: Message),
        publish: ([Message]) async -> [Result<Delivery, Failure>]
    ) async throws -> Drain {
        var drain = Drain()
        var rows = try await claim(columns, decode)
        while !rows.isEmpty {
            // Only a full batch can have more behind it.
            let full = rows.count == batchSize
            async let ahead = full ? claim(columns, decode) : []
            let batch: Batch
            do {
                batch = try await publishAndMark(rows, publish)
            } catch {
                // Never cancelled half-way: a claim that committed is released, not left to its lease.
                if let claimed = try? await ahead { try? await release(claimed.map(\.id)) }
                throw error
            }
            drain.add(batch)
            let next = try await ahead
            if batch.failed > 0 {
                try await release(next.map(\.id))
                break
            }
            rows = next
        }
        return drain
    }

    /// What a drain of several batches came to (`publishBatches`).
    public struct Drain: Sendable, Equatable {
        public var batches = 0
        public var claimed = 0
        public var delivered = 0
        public var failed = 0
        /// Rows the last batch claimed: short of `batchSize` when the table was drained.
        public var lastClaimed = 0
        public var firstFailure: String?

        mutating func add(_ batch: Batch) {
            batches += 1
            claimed += batch.claimed
            delivered += batch.delivered
            failed += batch.failed
            lastClaimed = batch.claimed
            firstFailure = firstFailure ?? batch.firstFailure
        }
    }

    private struct Claimed<Message: Sendable>: Sendable {
        let order: Int64
        let id: ID
        let message: Message
    }

    /// One statement, its own transaction: the row locks last only as long as the claim.
    private func claim<Message: Sendable>(
        _ columns: [String], _ decode: @escaping @Sendable (PostgresRow) throws -> (order: Int64, id: ID, message: Message)
    ) async throws -> [Claimed<Message>] {
        let leaseMilliseconds = Int64(claimLease.wholeMilliseconds)
        return try await pool.withConnection { connection in
            try await connection.query(
                """
                UPDATE \(unescaped: table) SET claimed_until = now() + \(leaseMilliseconds) * interval '1 millisecond'
                WHERE \(unescaped: idColumn) IN (
                    SELECT \(unescaped: idColumn) FROM \(unescaped: table)
                    WHERE sent_at IS NULL AND (claimed_until IS NULL OR claimed_until < now())
                    ORDER BY \(unescaped: orderColumn) LIMIT \(batchSize) FOR UPDATE SKIP LOCKED)
                RETURNING \(unescaped: columns.joined(separator: ", "))
                """
            ).map { row in
                let (order, id, message) = try decode(row)
                return Claimed(order: order, id: id, message: message)
            }
        }.sorted { $0.order < $1.order }
    }

    /// Hands `rows` to `publish` with no connection held, then marks the delivered ones sent
    /// and releases the others at once.
    private func publishAndMark<Message: Sendable, Delivery, Failure: Error>(
        _ rows: [Claimed<Message>], _ publish: ([Message]) async -> [Result<Delivery, Failure>]
    ) async throws -> Batch {
        guard !rows.isEmpty else { return Batch(claimed: 0, delivered: 0, failed: 0, firstFailure: nil) }
        // No connection is held while the producer waits for the broker.
        let results = await publish(rows.map(\.message))
        precondition(results.count == rows.count, "publish returns one result per message")
        var delivered: [ID] = []
        var failed: [ID] = []
        var firstFailure: String?
        for (row, result) in zip(rows, results) {
            switch result {
            case .success: delivered.append(row.id)
            case .failure(let error):
                failed.append(row.id)
                if firstFailure == nil { firstFailure = "\(error)" }
            }
        }
        try await pool.withConnection { connection in
            if !delivered.isEmpty {
                try await connection.execute(
                    """
                    UPDATE \(unescaped: table) SET sent_at = now(), claimed_until = NULL
                    WHERE \(unescaped: idColumn) = ANY(\(PostgresArray(delivered)))
                    """)
            }
        }
        // Released for the next attempt rather than left to the lease.
        try await release(failed)
        return Batch(claimed: rows.count, delivered: delivered.count, failed: failed.count, firstFailure: firstFailure)
    }

    /// Gives claimed, unsent rows back at once (no lease to wait for).
    private func release(_ ids: [ID]) async throws {
        guard !ids.isEmpty else { return }
        try await pool.withConnection { connection in
            try await connection.execute(
                """
                UPDATE \(unescaped: table) SET claimed_until = NULL
                WHERE \(unescaped: idColumn) = ANY(\(PostgresArray(ids))) AND sent_at IS NULL
                """)
        }
    }
}
