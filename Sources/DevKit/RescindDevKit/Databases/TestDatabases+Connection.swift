import Foundation
import Logging
import RescindPostgres

extension TestDatabases {
    /// One connection for `body`, closed whatever happens. With `attempts` > 1 a refused
    /// connection is tried again every 200 ms (a PostgreSQL restarting after a kill); `body` runs
    /// once.
    @discardableResult
    public static func withConnection<Result>(
        to configuration: PostgresConfiguration, attempts: Int = 1, _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        var attempt = 0
        while true {
            attempt += 1
            let connection: PostgresConnection
            do {
                connection = try await PostgresConnection.connect(configuration: configuration, logger: logger)
            } catch {
                if attempt >= attempts { throw error }
                try await Task.sleep(for: .milliseconds(200))
                continue
            }
            return try await closing(connection, body)
        }
    }

    /// Runs `body`, then closes `connection` whether or not `body` threw.
    public static func closing<Result>(
        _ connection: PostgresConnection, _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        do {
            let result = try await body(connection)
            await connection.close()
            return result
        } catch {
            await connection.close()
            throw error
        }
    }

    /// Drops each schema and everything in it (a missing one is fine): the one schema reset of
    /// the tests, the benchmarks and the demo.
    public static func dropSchemas(_ schemas: [String], url: String) async throws {
        try await withConnection(to: try PostgresConfiguration(url: url)) { connection in
            for schema in schemas {
                try await connection.execute("DROP SCHEMA IF EXISTS \(identifier: schema) CASCADE")
            }
        }
    }

    private static let logger = Logger(label: "rescind.devkit.db")
}
