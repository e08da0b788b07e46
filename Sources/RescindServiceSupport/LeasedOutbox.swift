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
    public func publishBatch<Message, Delivery, Failure: Error>(
        returning columns: [String],
        decode: (PostgresRow) throws -> (order: Int64, id: ID, message: Message),
        publish: ([Message]) async -> [Result<Delivery, Failure>]
    ) async throws -> Batch {
        let leaseMilliseconds = Int64(claimLease.components.seconds) * 1000 + claimLease.components.attoseconds / 1_000_000_000_000_000
        // One statement, its own transaction: the row locks last only as long as the claim.
        let rows = try await pool.withConnection { connection in
            try await connection.query(
                """
                UPDATE \(unescaped: table) SET claimed_until = now() + \(leaseMilliseconds) * interval '1 millisecond'
                WHERE \(unescaped: idColumn) IN (
                    SELECT \(unescaped: idColumn) FROM \(unescaped: table)
                    WHERE sent_at IS NULL AND (claimed_until IS NULL OR claimed_until < now())
                    ORDER BY \(unescaped: orderColumn) LIMIT \(batchSize) FOR UPDATE SKIP LOCKED)
                RETURNING \(unescaped: columns.joined(separator: ", "))
                """
            ).map(decode)
        }.sorted { $0.order < $1.order }
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
            if !failed.isEmpty {
                // Released for the next attempt rather than left to the lease.
                try await connection.execute(
                    """
                    UPDATE \(unescaped: table) SET claimed_until = NULL
                    WHERE \(unescaped: idColumn) = ANY(\(PostgresArray(failed))) AND sent_at IS NULL
                    """)
            }
        }
        return Batch(claimed: rows.count, delivered: delivered.count, failed: failed.count, firstFailure: firstFailure)
    }
}
