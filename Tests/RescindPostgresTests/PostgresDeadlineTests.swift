import Foundation
import RescindDevKit
import RescindPostgres
import Testing

/// Client-side deadlines (`PostgresConfiguration.callTimeout`): past the bound a call asks the
/// server on a fresh connection whether it answers at all. A live server keeps the call
/// waiting (slow work, such as a large revocation's commit, is never cut); a silent one (here a
/// throwaway cluster frozen with SIGSTOP: TCP open, no reply, like a partition) ends it with
/// `.timedOut` within the bound plus the probe's, the connection closed (never reused in an
/// unknown state), its transaction rolled back, and the pool serves again once the server does.
/// The services' side (503 `database_unavailable`, the relay) is `FrozenDatabaseProcessTests`.
@Suite("Deadlines", .serialized)
struct PostgresDeadlineTests {
    @Test("a statement three times the bound on a live server completes, on the same connection")
    func aSlowStatementOnALiveServerIsNotCut() async throws {
        try await TestDatabase.withSchema { _, configuration in
            let pool = Self.pool(configuration, bound: .milliseconds(500), size: 1)
            let firstPID = try await pool.withConnection { await $0.backendPID }
            let (pid, answer) = try await pool.withConnection { connection in
                (await connection.backendPID, try await connection.query("SELECT pg_sleep(1.5), 42").first!.decode(Int.self, column: 1))
            }
            #expect(answer == 42)
            #expect(pid == firstPID, "a slow statement's healthy connection was discarded")
            await pool.close()
        }
    }

    @Test(
        "a frozen server: .timedOut within the bound plus the probe, the transaction rolled back, a waiter for the pool freed, service again after the thaw",
        .enabled(if: ThrowawayPostgres.findBinaries() != nil, "needs PostgreSQL's server programs (initdb)"), .timeLimit(.minutes(3)))
    func aFrozenServer() async throws {
        let binaries = try #require(ThrowawayPostgres.findBinaries())
        let postgres = try await ThrowawayPostgres.start(port: try FreePort.next(), binaries: binaries)
        defer { postgres.remove() }
        do {
            let url = postgres.url.replacingOccurrences(of: "connect_timeout=5", with: "connect_timeout=2")
            let pool = Self.pool(try PostgresConfiguration(url: url), bound: .milliseconds(500), size: 1)
            try await pool.withConnection { try await $0.execute("CREATE TABLE marks (id int PRIMARY KEY)") }
            let firstPID = try await pool.withConnection { await $0.backendPID }

            #expect(!postgres.freeze().isEmpty)
            let started = ContinuousClock.now
            // The pool's one connection is taken by a transaction that never hears back; a
            // second caller waits for the pool meanwhile.
            let waiter = Task {
                try await Task.sleep(for: .milliseconds(100))
                return try await pool.withConnection { try await $0.query("SELECT 1").first!.decode(Int.self, column: 0) }
            }
            let error = await #expect(throws: PostgresError.self) {
                try await pool.transaction { connection in
                    try await connection.execute("INSERT INTO marks VALUES (1)")
                    try await connection.execute("SELECT 1")
                }
            }
            let took = ContinuousClock.now - started
            #expect(error?.code == .timedOut, "\(String(describing: error))")
            #expect(error?.isUnavailable == true)
            #expect(took >= .milliseconds(500) && took < .seconds(6), "answered after \(took): bound 500 ms, probe 2 s")
            let waited = await waiter.result
            let waiterError = #expect(throws: PostgresError.self) { try waited.get() }
            #expect(waiterError?.isUnavailable == true, "\(String(describing: waiterError))")
            #expect(ContinuousClock.now - started < .seconds(15), "the pool's waiter was freed after \(ContinuousClock.now - started)")

            #expect(!postgres.thaw().isEmpty)
            var served: (pid: Int32, count: Int)?
            let healed = ContinuousClock.now + .seconds(30)
            while served == nil, ContinuousClock.now < healed {
                served = try? await pool.withConnection { connection in
                    (await connection.backendPID, try await connection.query("SELECT count(*) FROM marks").first!.decode(Int.self, column: 0))
                }
                if served == nil { try await Task.sleep(for: .milliseconds(100)) }
            }
            let after = try #require(served, "no service 30 s after the thaw")
            #expect(after.count == 0, "the insert of the timed-out transaction stayed")
            #expect(after.pid != firstPID, "the timed-out connection was reused")
            await pool.close()
        } catch {
            _ = postgres.thaw()
            await postgres.stop()
            throw error
        }
        await postgres.stop()
    }

    @Test("a statement inside the deadline is untouched, and no deadline is the default")
    func withinTheDeadline() async throws {
        try await TestDatabase.withSchema { _, configuration in
            #expect(configuration.callTimeout == nil)
            let pool = Self.pool(configuration, bound: .seconds(5), size: 1)
            let pid = try await pool.withConnection { await $0.backendPID }
            let slept = try await pool.withConnection { connection in
                try await connection.query("SELECT pg_sleep(0.2), 7").first!.decode(Int.self, column: 1)
            }
            #expect(slept == 7)
            #expect(try await pool.withConnection { await $0.backendPID } == pid, "a healthy connection is kept")
            await pool.close()
        }
    }

    @Test("a caller waiting for a pooled connection longer than the bound, on a live server, keeps waiting and is served")
    func waitingForAConnection() async throws {
        try await TestDatabase.withSchema { _, configuration in
            let pool = Self.pool(configuration, bound: .milliseconds(700), size: 1)
            // The only connection is held (by a caller busy elsewhere) for 2 s.
            let holding = Task { try await pool.withConnection { _ in try await Task.sleep(for: .seconds(2)) } }
            try await Task.sleep(for: .milliseconds(200))
            let started = ContinuousClock.now
            let answer = try await pool.withConnection { try await $0.query("SELECT 1").first!.decode(Int.self, column: 0) }
            let took = ContinuousClock.now - started
            #expect(answer == 1)
            #expect(took >= .milliseconds(1500), "served after \(took), before the holder let go")
            try await holding.value
            await pool.close()
        }
    }

    /// A pool of `size` connections whose calls have the client-side `bound`.
    static func pool(_ configuration: PostgresConfiguration, bound: Duration, size: Int) -> PostgresConnectionPool {
        var bounded = configuration
        bounded.callTimeout = bound
        return PostgresConnectionPool(configuration: bounded, size: size, logger: TestDatabase.logger)
    }
}
