import Foundation
import RescindPostgres
import Testing

/// Client-side deadlines (`PostgresConfiguration.callTimeout`): a statement the server does
/// not answer in time throws `.timedOut` within the bound, its connection is closed (never
/// reused in an unknown state) and its statement cancelled on the server, and the pool goes on
/// serving. The frozen-server case (TCP open, no answer at all) is `FrozenDatabaseProcessTests`.
@Suite("Deadlines", .serialized)
struct PostgresDeadlineTests {
    @Test("pg_sleep past the deadline: .timedOut within the bound, the connection discarded, the pool usable afterwards")
    func statementPastTheDeadline() async throws {
        try await TestDatabase.withSchema { schema, configuration in
            var bounded = configuration
            bounded.callTimeout = .milliseconds(500)
            let pool = PostgresConnectionPool(configuration: bounded, size: 1, logger: TestDatabase.logger)
            let firstPID = try await pool.withConnection { await $0.backendPID }

            let started = ContinuousClock.now
            let error = await #expect(throws: PostgresError.self) {
                try await pool.withConnection { try await $0.query("SELECT pg_sleep(30)") }
            }
            let took = ContinuousClock.now - started
            #expect(error?.code == .timedOut, "\(String(describing: error))")
            #expect(error?.isUnavailable == true)
            #expect(took >= .milliseconds(500) && took < .seconds(5), "answered after \(took), bound 500 ms")

            // The pool's one slot serves again, on a new session: the old one was closed.
            let (pid, answer) = try await pool.withConnection { connection in
                (await connection.backendPID, try await connection.query("SELECT 42").first!.decode(Int.self, column: 0))
            }
            #expect(answer == 42)
            #expect(pid != firstPID, "the timed-out connection was reused")

            // The abandoned statement is cancelled on the server, its backend gone: nothing
            // goes on sleeping (and holding what it holds) for the remaining 29 s.
            var sleeping = -1
            for _ in 0..<100 {
                sleeping = try await TestDatabase.withConnection { admin, _ in
                    try await admin.query(
                        "SELECT count(*) FROM pg_stat_activity WHERE application_name = \(schema) AND query LIKE 'SELECT pg_sleep(30)%'"
                    ).first!.decode(Int.self, column: 0)
                }
                if sleeping == 0 { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(sleeping == 0, "the timed-out statement still runs on the server")
            await pool.close()
        }
    }

    @Test("inside a transaction: the timeout ends the call, the transaction is rolled back with its connection")
    func transactionPastTheDeadline() async throws {
        try await TestDatabase.withSchema { _, configuration in
            var bounded = configuration
            bounded.callTimeout = .milliseconds(500)
            let pool = PostgresConnectionPool(configuration: bounded, size: 2, logger: TestDatabase.logger)
            try await pool.withConnection { try await $0.execute("CREATE TABLE marks (id int PRIMARY KEY)") }
            let error = await #expect(throws: PostgresError.self) {
                try await pool.transaction { connection in
                    try await connection.execute("INSERT INTO marks VALUES (1)")
                    try await connection.execute("SELECT pg_sleep(30)")
                }
            }
            #expect(error?.code == .timedOut)
            let count = try await pool.withConnection { try await $0.query("SELECT count(*) FROM marks").first!.decode(Int.self, column: 0) }
            #expect(count == 0, "the insert of the timed-out transaction stayed")
            await pool.close()
        }
    }

    @Test("a statement inside the deadline is untouched, and no deadline is the default")
    func withinTheDeadline() async throws {
        try await TestDatabase.withSchema { _, configuration in
            #expect(configuration.callTimeout == nil)
            var bounded = configuration
            bounded.callTimeout = .seconds(5)
            let pool = PostgresConnectionPool(configuration: bounded, size: 1, logger: TestDatabase.logger)
            let pid = try await pool.withConnection { await $0.backendPID }
            let slept = try await pool.withConnection { connection in
                try await connection.query("SELECT pg_sleep(0.2), 7").first!.decode(Int.self, column: 1)
            }
            #expect(slept == 7)
            #expect(try await pool.withConnection { await $0.backendPID } == pid, "a healthy connection is kept")
            await pool.close()
        }
    }

    @Test("a caller waiting for a pooled connection longer than the deadline gets .timedOut; the pool serves once it is free")
    func waitingForAConnection() async throws {
        try await TestDatabase.withSchema { _, configuration in
            var bounded = configuration
            bounded.callTimeout = .milliseconds(700)
            let pool = PostgresConnectionPool(configuration: bounded, size: 1, logger: TestDatabase.logger)
            // The only connection is held (by a caller busy elsewhere) for 2 s.
            let holding = Task { try await pool.withConnection { _ in try await Task.sleep(for: .seconds(2)) } }
            try await Task.sleep(for: .milliseconds(200))
            let started = ContinuousClock.now
            let error = await #expect(throws: PostgresError.self) {
                try await pool.withConnection { try await $0.query("SELECT 1") }
            }
            let took = ContinuousClock.now - started
            #expect(error?.code == .timedOut)
            #expect(took >= .milliseconds(600) && took < .seconds(1.8), "gave up after \(took), bound 700 ms")
            try await holding.value
            let answer = try await pool.withConnection { try await $0.query("SELECT 1").first!.decode(Int.self, column: 0) }
            #expect(answer == 1)
            await pool.close()
        }
    }
}
