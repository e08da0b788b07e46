import Foundation
import Logging
import RescindDevKit
import RescindPostgres

/// Finds the test server through `RESCIND_DATABASE_URL` and gives each test a schema of its own.
enum TestDatabase {
    /// The dev kit's one default: `RESCIND_DATABASE_URL`, else the local stack's (port 54329).
    static let defaultURL = TestDatabases.localStackURL

    static let logger: Logger = {
        var logger = Logger(label: "rescind.postgres.tests")
        logger.logLevel = .warning
        return logger
    }()

    static func configuration(applicationName: String? = nil) throws -> PostgresConfiguration {
        var configuration = try PostgresConfiguration(defaultURL: defaultURL)
        configuration.applicationName = applicationName
        return configuration
    }

    static func uniqueName(_ prefix: String) -> String {
        prefix + "_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16)
    }

    /// Creates a uniquely named schema, runs `body` with a configuration whose `search_path` is
    /// that schema, and drops the schema afterwards (also when `body` throws).
    static func withSchema<T>(
        _ body: (_ schema: String, _ configuration: PostgresConfiguration) async throws -> T
    ) async throws -> T {
        let schema = uniqueName("rescind_test")
        let admin = try await PostgresConnection.connect(configuration: configuration(), logger: logger)
        try await admin.execute("CREATE SCHEMA \(identifier: schema)")
        var configuration = try configuration(applicationName: schema)
        configuration.searchPath = [schema]
        do {
            let result = try await body(schema, configuration)
            try await admin.execute("DROP SCHEMA \(identifier: schema) CASCADE")
            await admin.close()
            return result
        } catch {
            _ = try? await admin.execute("DROP SCHEMA \(identifier: schema) CASCADE")
            await admin.close()
            throw error
        }
    }

    /// `withSchema` plus one connection in it.
    @discardableResult
    static func withConnection<T>(
        _ body: (_ connection: PostgresConnection, _ schema: String) async throws -> T
    ) async throws -> T {
        try await withSchema { schema, configuration in
            let connection = try await PostgresConnection.connect(configuration: configuration, logger: logger)
            return try await closing(connection) { try await body($0, schema) }
        }
    }

    /// Server connections whose application_name is `name`.
    static func serverConnectionCount(applicationName name: String) async throws -> Int {
        let admin = try await PostgresConnection.connect(configuration: configuration(), logger: logger)
        return try await closing(admin) { admin in
            let rows = try await admin.query("SELECT count(*) FROM pg_stat_activity WHERE application_name = \(name)")
            return try rows[0].decode(Int.self, column: 0)
        }
    }

    /// Terminates a server process and waits until it is gone.
    static func terminateBackend(_ pid: Int32) async throws {
        let admin = try await PostgresConnection.connect(configuration: configuration(), logger: logger)
        try await closing(admin) { admin in
            try await admin.execute("SELECT pg_terminate_backend(\(pid))")
            for _ in 0..<100 {
                let rows = try await admin.query("SELECT count(*) FROM pg_stat_activity WHERE pid = \(pid)")
                if try rows[0].decode(Int.self, column: 0) == 0 { return }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }

    /// Runs `body`, then closes `connection` whether or not `body` threw.
    static func closing<T>(
        _ connection: PostgresConnection, _ body: (PostgresConnection) async throws -> T
    ) async throws -> T {
        try await TestDatabases.closing(connection, body)
    }
}

struct TimeoutError: Error {}

/// Runs `body`, failing with `TimeoutError` if it takes longer than `seconds`.
func withTimeout<T: Sendable>(seconds: Double, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            throw TimeoutError()
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}
