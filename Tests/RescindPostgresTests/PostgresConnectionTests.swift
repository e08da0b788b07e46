import Foundation
import Logging
import RescindPostgres
import Testing

@Suite("Connections, statements and errors")
struct PostgresConnectionTests {
    @Test func configurationNeverPrintsThePassword() throws {
        let configuration = try PostgresConfiguration(url: "postgres://alice:hunter2-secret@db.example:6543/records?sslmode=disable")
        for text in [configuration.description, String(reflecting: configuration), "\(configuration)"] {
            #expect(!text.contains("hunter2"))
            #expect(text.contains("user=alice"))
            #expect(text.contains("host=db.example"))
            #expect(text.contains("port=6543"))
            #expect(text.contains("dbname=records"))
            #expect(text.contains("password=***"))
        }
        var dumped = ""
        dump(configuration, to: &dumped)
        #expect(!dumped.contains("hunter2"))
    }

    @Test func malformedURLErrorDoesNotQuoteIt() {
        let error = #expect(throws: PostgresError.self) {
            try PostgresConfiguration(url: "postgres://bob:pa%zzss@host/db")
        }
        #expect(error?.code == .invalidConfiguration)
        #expect(!(error?.description.contains("pa%zz") ?? true))
    }

    @Test func failedConnectNamesTheServerButNotThePassword() async throws {
        let configuration = try PostgresConfiguration(url: "postgres://postgres:hunter2@127.0.0.1:1/postgres?connect_timeout=2")
        let error = await #expect(throws: PostgresError.self) {
            try await PostgresConnection.connect(configuration: configuration, logger: TestDatabase.logger)
        }
        #expect(error?.code == .connectionFailed)
        #expect(!(error?.description.contains("hunter2") ?? true))
    }

    @Test func executeReportsAffectedRowsAndQueryReturnsThem() async throws {
        try await TestDatabase.withConnection { connection, _ in
            try await connection.execute("CREATE TABLE items (n int8 PRIMARY KEY, label text NOT NULL)")
            var inserted = 0
            for n in 1...5 {
                inserted += try await connection.execute("INSERT INTO items VALUES (\(n), \("item \(n)"))")
            }
            #expect(inserted == 5)
            #expect(try await connection.execute("UPDATE items SET label = label || '!' WHERE n > \(2)") == 3)
            let rows = try await connection.query("SELECT n, label FROM items WHERE n >= \(4) ORDER BY n")
            #expect(try rows.map { try $0.decode(Int.self, String.self) }.map { "\($0.0):\($0.1)" } == ["4:item 4!", "5:item 5!"])
            #expect(try await connection.execute("DELETE FROM items") == 5)
        }
    }

    @Test func serverErrorCarriesSQLStateAndConstraintButNoParameterValue() async throws {
        try await TestDatabase.withConnection { connection, _ in
            try await connection.execute("CREATE TABLE accounts (email text CONSTRAINT accounts_email_key UNIQUE)")
            let secret = "patient-7731@example.org"
            try await connection.execute("INSERT INTO accounts VALUES (\(secret))")
            let duplicate = await #expect(throws: PostgresError.self) {
                try await connection.execute("INSERT INTO accounts VALUES (\(secret))")
            }
            let error = try #require(duplicate)
            #expect(error.code == .server)
            #expect(error.isUniqueViolation)
            #expect(error.sqlState == "23505")
            #expect(error.constraint == "accounts_email_key")
            #expect(error.table == "accounts")
            #expect(error.message.contains("accounts_email_key"))
            #expect(!error.description.contains("patient-7731"))
            #expect(!String(reflecting: error).contains("patient-7731"))

            // Data exceptions quote the rejected input in their primary message: redacted.
            let cast = await #expect(throws: PostgresError.self) {
                try await connection.query("SELECT \("secret-value-99")::int")
            }
            #expect(cast?.sqlState == "22P02")
            #expect(cast?.message.contains("integer") == true)
            #expect(!(cast?.description.contains("secret-value-99") ?? true))

            // The connection is still usable after errors.
            #expect(try await connection.query("SELECT 1::int4")[0].decode(Int32.self, column: 0) == 1)
        }
    }

    @Test func multiStatementScriptsAndNotices() async throws {
        try await TestDatabase.withConnection { connection, _ in
            try await connection.executeScript("""
                CREATE TABLE a (n int);
                CREATE TABLE IF NOT EXISTS a (n int);
                INSERT INTO a VALUES (1), (2);
                """)
            #expect(try await connection.query("SELECT sum(n) FROM a")[0].decode(Int.self, column: 0) == 3)
        }
    }

    @Test func closedConnectionRefusesWork() async throws {
        let connection = try await PostgresConnection.connect(configuration: TestDatabase.configuration(), logger: TestDatabase.logger)
        await connection.close()
        let error = await #expect(throws: PostgresError.self) { try await connection.query("SELECT 1") }
        #expect(error?.code == .connectionClosed)
    }

    @Test func blockingWorkRunsOffTheCooperativePool() async throws {
        // Eight connections each blocked 2 s inside libpq. Were libpq to block the cooperative
        // pool (one thread per core, 2 here), they would need at least 8 s in turns and starve
        // the timer task for seconds; on their own queues they overlap. The margins are wide
        // because the whole suite runs in parallel on a loaded 2-core machine.
        let configuration = try TestDatabase.configuration()
        let connections = 8
        let clock = ContinuousClock()
        let start = clock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<connections {
                group.addTask {
                    let connection = try await PostgresConnection.connect(configuration: configuration, logger: TestDatabase.logger)
                    try await connection.execute("SELECT pg_sleep(2)")
                    await connection.close()
                }
            }
            group.addTask {
                try await Task.sleep(for: .milliseconds(100))
                #expect(clock.now - start < .seconds(1.5), "the cooperative pool was blocked")
            }
            try await group.waitForAll()
        }
        #expect(clock.now - start < .seconds(6), "blocked statements ran in turns, not side by side")
    }
}
