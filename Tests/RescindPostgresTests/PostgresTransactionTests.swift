import RescindPostgres
import Testing

@Suite("Transactions")
struct PostgresTransactionTests {
    struct Boom: Error {}

    private func count(_ connection: PostgresConnection) async throws -> Int {
        try await connection.query("SELECT count(*) FROM ledger")[0].decode(Int.self, column: 0)
    }

    private func withLedger(_ body: (PostgresConnection) async throws -> Void) async throws {
        try await TestDatabase.withConnection { connection, _ in
            try await connection.execute("CREATE TABLE ledger (n int8 PRIMARY KEY)")
            try await body(connection)
        }
    }

    @Test func commitsWhenTheBodyReturns() async throws {
        try await withLedger { connection in
            let value = try await connection.transaction { connection in
                try await connection.execute("INSERT INTO ledger VALUES (1), (2)")
                return "done"
            }
            #expect(value == "done")
            #expect(try await count(connection) == 2)
        }
    }

    @Test func rollsBackEverythingWhenTheBodyThrows() async throws {
        try await withLedger { connection in
            await #expect(throws: Boom.self) {
                try await connection.transaction { connection in
                    try await connection.execute("INSERT INTO ledger VALUES (1), (2)")
                    try await connection.execute("INSERT INTO ledger VALUES (3)")
                    throw Boom()
                }
            }
            #expect(try await count(connection) == 0)
            // The connection is back to autocommit and usable.
            try await connection.execute("INSERT INTO ledger VALUES (9)")
            #expect(try await count(connection) == 1)
        }
    }

    @Test func rollsBackWhenTheTaskIsCancelled() async throws {
        try await withLedger { connection in
            let task = Task {
                try await connection.transaction { connection in
                    try await connection.execute("INSERT INTO ledger VALUES (1)")
                    withUnsafeCurrentTask { $0?.cancel() }
                }
            }
            await #expect(throws: CancellationError.self) { try await task.value }
            let remaining = try await count(connection)
            #expect(remaining == 0)
        }
    }

    @Test func aSwallowedStatementErrorAbortsTheCommit() async throws {
        try await withLedger { connection in
            let error = await #expect(throws: PostgresError.self) {
                try await connection.transaction { connection in
                    try await connection.execute("INSERT INTO ledger VALUES (1)")
                    _ = try? await connection.execute("INSERT INTO ledger VALUES (1)")
                }
            }
            #expect(error?.code == .transactionAborted)
            let remaining = try await count(connection)
            #expect(remaining == 0)
        }
    }

    @Test func isolationLevelIsApplied() async throws {
        try await withLedger { connection in
            let level = try await connection.transaction(isolationLevel: .serializable) { connection in
                try await connection.query("SHOW transaction_isolation")[0].decode(String.self, column: 0)
            }
            #expect(level == "serializable")
        }
    }

    @Test func nestedTransactionsAreRejected() async throws {
        try await withLedger { connection in
            let error = await #expect(throws: PostgresError.self) {
                try await connection.transaction { connection in
                    try await connection.execute("INSERT INTO ledger VALUES (1)")
                    try await connection.transaction { _ in }
                }
            }
            #expect(error?.code == .transactionAlreadyOpen)
            let remaining = try await count(connection)
            #expect(remaining == 0)
        }
    }

    @Test func serializationFailuresAreRecognisable() async throws {
        try await TestDatabase.withSchema { _, configuration in
            let first = try await PostgresConnection.connect(configuration: configuration, logger: TestDatabase.logger)
            let second = try await PostgresConnection.connect(configuration: configuration, logger: TestDatabase.logger)
            try await first.execute("CREATE TABLE counter (n int8)")
            try await first.execute("INSERT INTO counter VALUES (0)")
            let error = await #expect(throws: PostgresError.self) {
                try await first.transaction(isolationLevel: .serializable) { first in
                    _ = try await first.query("SELECT n FROM counter")
                    try await second.transaction(isolationLevel: .serializable) { second in
                        _ = try await second.query("SELECT n FROM counter")
                        try await second.execute("UPDATE counter SET n = n + 1")
                    }
                    try await first.execute("UPDATE counter SET n = n + 1")
                }
            }
            #expect(error?.isSerializationFailure == true)
            #expect(error?.isTransient == true)
            await first.close()
            await second.close()
        }
    }
}
