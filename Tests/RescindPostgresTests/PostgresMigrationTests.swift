import Foundation
import RescindPostgres
import Testing

@Suite("Migrations")
struct PostgresMigrationTests {
    /// A temporary directory holding `files`, removed afterwards.
    static func withMigrations<T>(_ files: [String: String], _ body: (URL) async throws -> T) async throws -> T {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(TestDatabase.uniqueName("migrations"))
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for (name, sql) in files {
            try Data(sql.utf8).write(to: directory.appendingPathComponent(name))
        }
        return try await body(directory)
    }

    static let ordered = [
        "0001_init.sql": "CREATE TABLE steps (id serial PRIMARY KEY, name text NOT NULL);\nINSERT INTO steps (name) VALUES ('0001');",
        "0002_more.sql": "ALTER TABLE steps ADD COLUMN note text; INSERT INTO steps (name) VALUES ('0002');",
        "0010_last.sql": "INSERT INTO steps (name, note) VALUES ('0010', 'needs 0002');",
        "README.md": "not a migration",
    ]

    static func steps(_ connection: PostgresConnection, schema: String) async throws -> [String] {
        try await connection.query("SELECT name FROM \(identifier: schema).steps ORDER BY id").map { try $0.decode(String.self, column: 0) }
    }

    static func recorded(_ connection: PostgresConnection, schema: String) async throws -> [String] {
        try await connection.query("SELECT name FROM \(identifier: schema).schema_migrations ORDER BY version")
            .map { try $0.decode(String.self, column: 0) }
    }

    @Test func appliesInLexicalOrderOnceAndRecordsChecksums() async throws {
        try await Self.withMigrations(Self.ordered) { directory in
            try await TestDatabase.withConnection { connection, _ in
                let schema = TestDatabase.uniqueName("rescind_migrated")
                let migrator = PostgresMigrator(directory: directory, schema: schema, logger: TestDatabase.logger)
                #expect(try await migrator.migrate(on: connection) == ["0001_init.sql", "0002_more.sql", "0010_last.sql"])
                #expect(try await migrator.migrate(on: connection) == [])
                #expect(try await Self.steps(connection, schema: schema) == ["0001", "0002", "0010"])
                #expect(try await Self.recorded(connection, schema: schema) == ["0001_init.sql", "0002_more.sql", "0010_last.sql"])

                let checksum = try await connection.query("""
                    SELECT checksum, checksum = encode(sha256(convert_to(\(Self.ordered["0001_init.sql"]!), 'UTF8')), 'hex'),
                           applied_at <= now()
                    FROM \(identifier: schema).schema_migrations WHERE version = '0001'
                    """)
                let (hex, matches, past) = try checksum[0].decode(String.self, Bool.self, Bool.self)
                #expect(hex.count == 64)
                #expect(matches)
                #expect(past)
                try await connection.execute("DROP SCHEMA \(identifier: schema) CASCADE")
            }
        }
    }

    @Test func aChangedAppliedMigrationIsAnErrorNamingTheFile() async throws {
        try await Self.withMigrations(Self.ordered) { directory in
            try await TestDatabase.withConnection { connection, schema in
                let migrator = PostgresMigrator(directory: directory, schema: schema, logger: TestDatabase.logger)
                try await migrator.migrate(on: connection)
                try Data("ALTER TABLE steps ADD COLUMN note text; -- edited".utf8)
                    .write(to: directory.appendingPathComponent("0002_more.sql"))
                let error = await #expect(throws: PostgresError.self) { try await migrator.migrate(on: connection) }
                #expect(error?.code == .migrationChecksumMismatch)
                #expect(error?.message.contains("0002_more.sql") == true)
            }
        }
    }

    @Test func aFailingMigrationRollsBackAndIsNotRecorded() async throws {
        var files = Self.ordered
        files["0003_broken.sql"] = "CREATE TABLE half_done (n int); INSERT INTO steps (name) VALUES ('0003'); SELECT 1 / 0;"
        try await Self.withMigrations(files) { directory in
            try await TestDatabase.withConnection { connection, schema in
                let migrator = PostgresMigrator(directory: directory, schema: schema, logger: TestDatabase.logger)
                let error = await #expect(throws: PostgresError.self) { try await migrator.migrate(on: connection) }
                #expect(error?.code == .migrationFailed)
                #expect(error?.sqlState == "22012")
                #expect(error?.message.contains("0003_broken.sql") == true)
                #expect(try await Self.recorded(connection, schema: schema) == ["0001_init.sql", "0002_more.sql"])
                #expect(try await Self.steps(connection, schema: schema) == ["0001", "0002"])
                let halfDone = try await connection.query("SELECT to_regclass(\(schema + ".half_done"))::text")
                #expect(try halfDone[0].decode(String?.self, column: 0) == nil)
                // The advisory lock was released: another run proceeds (and fails the same way).
                await #expect(throws: PostgresError.self) { try await migrator.migrate(on: connection) }
            }
        }
    }

    @Test func concurrentRunnersApplyEachMigrationOnce() async throws {
        try await Self.withMigrations(Self.ordered) { directory in
            try await TestDatabase.withSchema { schema, configuration in
                let pool = PostgresConnectionPool(configuration: configuration, size: 4, logger: TestDatabase.logger)
                let migrator = PostgresMigrator(directory: directory, schema: schema, logger: TestDatabase.logger)
                let applied = try await withThrowingTaskGroup(of: [String].self) { group in
                    for _ in 0..<4 { group.addTask { try await migrator.migrate(using: pool) } }
                    return try await group.reduce(into: []) { $0 += $1 }
                }
                #expect(applied.sorted() == ["0001_init.sql", "0002_more.sql", "0010_last.sql"])
                let steps = try await pool.withConnection { try await Self.steps($0, schema: schema) }
                #expect(steps == ["0001", "0002", "0010"])
                await pool.close()
            }
        }
    }

    @Test func badFileNamesAreRejected() async throws {
        try await Self.withMigrations(["init.sql": "SELECT 1;"]) { directory in
            try await TestDatabase.withConnection { connection, schema in
                let error = await #expect(throws: PostgresError.self) {
                    try await PostgresMigrator(directory: directory, schema: schema, logger: TestDatabase.logger).migrate(on: connection)
                }
                #expect(error?.code == .invalidMigration)
                #expect(error?.message.contains("init.sql") == true)
            }
        }
    }
}
