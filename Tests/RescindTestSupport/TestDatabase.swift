import Foundation
import RescindDevKit
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
        try? await TestDatabases.dropSchemas([schema], url: GrantServiceHarness.databaseURL)
    }

    @discardableResult
    private static func withConnection<Result>(_ body: (PostgresConnection) async throws -> Result) async throws -> Result {
        try await TestDatabases.withConnection(to: try PostgresConfiguration(url: GrantServiceHarness.databaseURL), body)
    }
}
