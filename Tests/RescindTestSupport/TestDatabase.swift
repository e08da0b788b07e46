import Foundation
import Logging
import RescindPostgres

/// Direct access to the test database for tests that create schemas through another
/// process (e.g. `rescind-admin migrate`) and must check and remove them.
public enum TestDatabase {
    /// The tables of `schema`, sorted.
    public static func tables(in schema: String) async throws -> [String] {
        try await withConnection { connection in
            try await connection.query(
                "SELECT table_name::text FROM information_schema.tables WHERE table_schema = \(schema) ORDER BY 1"
            ).map { try $0.decode(String.self, column: 0) }
        }
    }

    /// Drops `schema` and everything in it; a missing schema is fine.
    public static func dropSchema(_ schema: String) async {
        _ = try? await withConnection { connection in
            try await connection.execute("DROP SCHEMA IF EXISTS \(identifier: schema) CASCADE")
        }
    }

    private static func withConnection<Result>(_ body: (PostgresConnection) async throws -> Result) async throws -> Result {
        try await withConnection(to: try PostgresConfiguration(url: GrantServiceHarness.databaseURL), body)
    }

    /// One connection for `body`, closed whatever happens.
    static func withConnection<Result>(
        to configuration: PostgresConfiguration, _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        let connection = try await PostgresConnection.connect(configuration: configuration, logger: Logger(label: "test.db"))
        do {
            let result = try await body(connection)
            await connection.close()
            return result
        } catch {
            await connection.close()
            throw error
        }
    }
}
