import Foundation
import Logging
import RescindPostgres
import RescindServiceSupport
import RescindTestSupport
import Testing

/// `LeasedOutbox`, the claim → publish → mark cycle both relays share, on a table of its own:
/// delivered rows are marked sent, failed ones released at once, a live claim keeps another
/// relay off its rows, an expired one (a relay that died) lets them be sent again.
@Suite struct LeasedOutboxTests {
    struct PublishFailed: Error, CustomStringConvertible {
        let id: Int64
        var description: String { "row \(id) was refused" }
    }

    /// A scratch schema with one outbox table of `rows` unsent rows, and a pool on it.
    static func withOutbox(rows: Int, _ body: (PostgresConnectionPool, String) async throws -> Void) async throws {
        let schema = "leased_outbox_\(UUID().uuidString.prefix(8).lowercased())"
        var configuration = try PostgresConfiguration(url: GrantServiceHarness.databaseURL)
        configuration.searchPath = [schema]
        let pool = PostgresConnectionPool(configuration: configuration, size: 2, logger: Logger(label: "test.leased-outbox"))
        do {
            try await pool.withConnection { connection in
                try await connection.execute("CREATE SCHEMA \(identifier: schema)")
                try await connection.execute(
                    """
                    CREATE TABLE \(identifier: schema).messages (
                        id bigint PRIMARY KEY, body text NOT NULL, sent_at timestamptz, claimed_until timestamptz)
                    """)
                try await connection.execute(
                    "INSERT INTO \(identifier: schema).messages (id, body) SELECT n, 'message ' || n FROM generate_series(1, \(rows)) AS n")
            }
            try await body(pool, schema)
        } catch {
            await pool.close()
            await TestDatabase.dropSchema(schema)
            throw error
        }
        await pool.close()
        await TestDatabase.dropSchema(schema)
    }

    static func outbox(_ pool: PostgresConnectionPool, batchSize: Int = 3, lease: Duration = .seconds(90)) -> LeasedOutbox<Int64> {
        LeasedOutbox(pool: pool, table: "messages", idColumn: "id", orderColumn: "id", batchSize: batchSize, claimLease: lease)
    }

    /// One batch, publishing with `publish`; returns the batch and the bodies handed to it.
    static func batch(
        _ outbox: LeasedOutbox<Int64>, _ publish: ([(Int64, String)]) async -> [Result<Void, PublishFailed>]
    ) async throws -> LeasedOutbox<Int64>.Batch {
        try await outbox.publishBatch(returning: ["id", "body"]) { row in
            let (id, body) = try row.decode(Int64.self, String.self)
            return (id, id, (id, body))
        } publish: { messages in
            await publish(messages)
        }
    }

    static func ids(_ pool: PostgresConnectionPool, _ condition: String) async throws -> [Int64] {
        try await pool.withConnection { connection in
            try await connection.query("SELECT id FROM messages WHERE \(unescaped: condition) ORDER BY id").map {
                try $0.decode(Int64.self, column: 0)
            }
        }
    }

    @Test func deliveredRowsAreMarkedSentAndFailedOnesReleasedAtOnce() async throws {
        try await Self.withOutbox(rows: 5) { pool, _ in
            let outbox = Self.outbox(pool)
            var handed: [(Int64, String)] = []
            let first = try await Self.batch(outbox) { messages in
                handed = messages
                return messages.map { $0.0 == 2 ? .failure(PublishFailed(id: $0.0)) : .success(()) }
            }
            // In order, at most a batch, the failure counted and described.
            #expect(handed.map(\.0) == [1, 2, 3] && handed.map(\.1) == ["message 1", "message 2", "message 3"])
            #expect(first.claimed == 3 && first.delivered == 2 && first.failed == 1 && first.firstFailure == "row 2 was refused")
            #expect(try await Self.ids(pool, "sent_at IS NOT NULL") == [1, 3])
            #expect(try await Self.ids(pool, "claimed_until IS NOT NULL").isEmpty)

            // The released row goes with the next batch, at once (no lease to wait for).
            let second = try await Self.batch(outbox) { messages in
                handed = messages
                return messages.map { _ in .success(()) }
            }
            #expect(handed.map(\.0) == [2, 4, 5] && second.claimed == 3 && second.delivered == 3 && second.firstFailure == nil)
            let empty = try await Self.batch(outbox) { _ in Issue.record("nothing is left to publish"); return [] }
            #expect(empty.claimed == 0)
        }
    }

    /// A relay publishing holds no connection, and its claim keeps a second relay off its rows;
    /// a claim whose relay died (never marked nor released) is taken again once its lease passed.
    @Test func aClaimKeepsOthersOffUntilItsLeaseExpires() async throws {
        try await Self.withOutbox(rows: 2) { pool, _ in
            // A lease far longer than any stall of a loaded machine: "until it expires" is a
            // timestamp the test moves, not a race against the clock.
            let outbox = Self.outbox(pool, batchSize: 10, lease: .seconds(120))
            var secondClaimed = -1
            let first = try await Self.batch(outbox) { messages in
                // While the first relay "waits for the broker", another replica finds nothing to claim,
                // through the same pool of two connections.
                secondClaimed = (try? await Self.batch(outbox) { _ in Issue.record("claimed twice"); return [] })?.claimed ?? -1
                return messages.map { _ in .success(()) }
            }
            #expect(first.delivered == 2 && secondClaimed == 0)

            // A relay that dies between claiming and marking: simulated by a claim that is never marked.
            try await pool.withConnection { connection in
                try await connection.execute("UPDATE messages SET sent_at = NULL, claimed_until = now() + interval '120 seconds'")
            }
            let early = try await Self.batch(outbox) { messages in
                Issue.record("taken before the lease expired")
                return messages.map { _ in .success(()) }
            }
            #expect(early.claimed == 0)
            // The lease passes (what 120 s would do).
            try await pool.withConnection { connection in
                try await connection.execute("UPDATE messages SET claimed_until = now() - interval '1 millisecond'")
            }
            let retaken = try await Self.batch(outbox) { messages in messages.map { _ in .success(()) } }
            #expect(retaken.claimed == 2 && retaken.delivered == 2)
            #expect(try await Self.ids(pool, "sent_at IS NULL").isEmpty)
        }
    }

    /// `publishBatches` drains the table batch after batch, in order, and claims the next batch
    /// while the current one is with the broker (so the database's time hides behind the broker's).
    @Test func aDrainClaimsTheNextBatchWhileTheCurrentOneIsPublished() async throws {
        try await Self.withOutbox(rows: 7) { pool, _ in
            let outbox = Self.outbox(pool, batchSize: 3)
            var handed: [[Int64]] = []
            var claimedDuringFirst: [Int64] = []
            let drain = try await outbox.publishBatches(returning: ["id", "body"]) { row in
                let (id, body) = try row.decode(Int64.self, String.self)
                return (id, id, (id, body))
            } publish: { (messages: [(Int64, String)]) -> [Result<Void, PublishFailed>] in
                handed.append(messages.map(\.0))
                if handed.count == 1 {
                    // The first batch is "with the broker" until the second one is claimed.
                    let deadline = ContinuousClock.now + .seconds(30)
                    while claimedDuringFirst != [4, 5, 6], ContinuousClock.now < deadline {
                        try? await Task.sleep(for: .milliseconds(5))
                        claimedDuringFirst = (try? await Self.ids(pool, "claimed_until IS NOT NULL AND id > 3")) ?? []
                    }
                }
                return messages.map { _ in .success(()) }
            }
            #expect(claimedDuringFirst == [4, 5, 6])
            #expect(handed == [[1, 2, 3], [4, 5, 6], [7]])
            #expect(drain.batches == 3 && drain.claimed == 7 && drain.delivered == 7 && drain.failed == 0 && drain.lastClaimed == 1)
            #expect(try await Self.ids(pool, "sent_at IS NULL OR claimed_until IS NOT NULL").isEmpty)
        }
    }

    /// A failed delivery stops the drain and releases the batch claimed ahead unpublished, so the
    /// next drain starts again at the first row not sent and keeps the rows' order.
    @Test func aFailedDeliveryReleasesTheBatchClaimedAhead() async throws {
        try await Self.withOutbox(rows: 7) { pool, _ in
            let outbox = Self.outbox(pool, batchSize: 3)
            func drain(failing: Int64?) async throws -> (LeasedOutbox<Int64>.Drain, [[Int64]]) {
                var handed: [[Int64]] = []
                let drain = try await outbox.publishBatches(returning: ["id", "body"]) { row in
                    let (id, body) = try row.decode(Int64.self, String.self)
                    return (id, id, (id, body))
                } publish: { (messages: [(Int64, String)]) -> [Result<Void, PublishFailed>] in
                    handed.append(messages.map(\.0))
                    return messages.map { $0.0 == failing ? .failure(PublishFailed(id: $0.0)) : .success(()) }
                }
                return (drain, handed)
            }
            let (failed, firstHanded) = try await drain(failing: 2)
            #expect(firstHanded == [[1, 2, 3]])
            #expect(failed.batches == 1 && failed.delivered == 2 && failed.failed == 1 && failed.firstFailure == "row 2 was refused")
            // Nothing stays claimed: neither the failed row nor the batch claimed ahead (4, 5, 6).
            #expect(try await Self.ids(pool, "claimed_until IS NOT NULL").isEmpty)
            #expect(try await Self.ids(pool, "sent_at IS NOT NULL") == [1, 3])

            let (retried, secondHanded) = try await drain(failing: nil)
            #expect(secondHanded == [[2, 4, 5], [6, 7]])
            #expect(retried.delivered == 5 && retried.lastClaimed == 2)
            #expect(try await Self.ids(pool, "sent_at IS NULL").isEmpty)
        }
    }
}
