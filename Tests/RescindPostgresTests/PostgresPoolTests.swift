import RescindPostgres
import Testing

@Suite("Connection pool")
struct PostgresPoolTests {
    @Test func twoHundredConcurrentTasksShareFourConnections() async throws {
        try await TestDatabase.withSchema { schema, configuration in
            let pool = PostgresConnectionPool(configuration: configuration, size: 4, logger: TestDatabase.logger)
            try await pool.withConnection { try await $0.execute("CREATE TABLE hits (task int8 PRIMARY KEY, pid int4)") }

            let pids = try await withThrowingTaskGroup(of: Int32.self) { group in
                for task in 0..<200 {
                    group.addTask {
                        try await pool.transaction { connection in
                            let pid = await connection.backendPID
                            try await connection.execute("INSERT INTO hits SELECT \(task), pg_backend_pid() FROM pg_sleep(0.002)")
                            return pid
                        }
                    }
                }
                var pids: Set<Int32> = []
                for try await pid in group { pids.insert(pid) }
                return pids
            }
            #expect(pids.count <= 4)
            #expect(try await TestDatabase.serverConnectionCount(applicationName: schema) <= 4)
            let rows = try await pool.withConnection { try await $0.query("SELECT count(*), count(DISTINCT pid) FROM hits") }
            let (hits, distinctPIDs) = try rows[0].decode(Int.self, Int.self)
            #expect(hits == 200)
            #expect(distinctPIDs <= 4)
            await pool.close()
        }
    }

    @Test func aTerminatedConnectionIsReplaced() async throws {
        try await TestDatabase.withSchema { _, configuration in
            let pool = PostgresConnectionPool(configuration: configuration, size: 1, logger: TestDatabase.logger)
            let firstPID = try await pool.withConnection { await $0.backendPID }

            // Killed while idle in the pool: noticed at checkout, replaced transparently.
            try await TestDatabase.terminateBackend(firstPID)
            let secondPID = try await pool.withConnection { connection in
                try await connection.query("SELECT pg_backend_pid()")[0].decode(Int32.self, column: 0)
            }
            #expect(secondPID != firstPID)

            // Killed while in use: that statement fails as connectionLost, the next user gets a new one.
            let error = await #expect(throws: PostgresError.self) {
                try await pool.withConnection { connection in
                    try await TestDatabase.terminateBackend(await connection.backendPID)
                    try await connection.execute("SELECT 1")
                }
            }
            #expect(error?.code == .connectionLost)
            let thirdPID = try await pool.withConnection { await $0.backendPID }
            #expect(thirdPID != secondPID)
            #expect(thirdPID != 0)
            await pool.close()
        }
    }

    @Test func waitersAreServedInArrivalOrder() async throws {
        let pool = PostgresConnectionPool(configuration: try TestDatabase.configuration(), size: 1, logger: TestDatabase.logger)
        let order = OrderRecorder()
        var waiters: [Task<Void, any Error>] = []
        try await pool.withConnection { _ in
            // Queue three waiters, one after the other, while the only connection is busy.
            for index in 0..<3 {
                waiters.append(Task { try await pool.withConnection { _ in await order.append(index) } })
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        for waiter in waiters { try await waiter.value }
        #expect(await order.values == [0, 1, 2])
        await pool.close()
    }

    @Test func aClosedPoolRefusesWork() async throws {
        let pool = PostgresConnectionPool(configuration: try TestDatabase.configuration(), size: 2, logger: TestDatabase.logger)
        try await pool.withConnection { _ = try await $0.query("SELECT 1") }
        await pool.close()
        let error = await #expect(throws: PostgresError.self) { try await pool.withConnection { _ in } }
        #expect(error?.code == .poolClosed)
    }
}

actor OrderRecorder {
    private(set) var values: [Int] = []
    func append(_ value: Int) { values.append(value) }
}
