import Foundation
import Logging
import RescindObservability
import RescindPostgres

/// The PostgreSQL pool a service runs on, opened the same way by every service: its own
/// schema first on the search path (unqualified table names land there), its name in
/// `pg_stat_activity` (so an operator sees which service holds a connection), every call
/// bounded by `callTimeout` (`RESCIND_DATABASE_TIMEOUT_SECONDS`: a database that stops
/// answering costs a request a 503 `database_unavailable`, not a wait for ever), and, when
/// configured, its migrations applied before anything uses it.
public struct ServiceDatabase: Sendable {
    /// The pool's settings, for what opens a connection of its own (a NOTIFY listener).
    public let configuration: PostgresConfiguration
    public let pool: PostgresConnectionPool

    /// Opens the pool and, when `settings.migrateOnStart`, applies the `*.sql` files of
    /// `settings.migrationsDirectory` to `settings.schema`, creating it if needed (replicas
    /// starting together take turns: the migrator locks the schema).
    /// - Throws: `PostgresError` for a malformed URL, an unreachable server during the
    ///   migration or a migration that failed (it was rolled back).
    public static func open(
        _ settings: some ServiceDatabaseSettings, applicationName: String, logger: Logger
    ) async throws -> ServiceDatabase {
        var configuration = try PostgresConfiguration(url: settings.url)
        configuration.searchPath = [settings.schema]
        configuration.applicationName = applicationName
        if settings.migrateOnStart {
            // Migrations may rewrite large tables: not bounded like a request's statements,
            // on a connection of their own.
            let migrations = PostgresConnectionPool(configuration: configuration, size: 1, logger: logger)
            let applied: [String]
            do {
                applied = try await PostgresMigrator(
                    directory: URL(fileURLWithPath: settings.migrationsDirectory), schema: settings.schema, logger: logger
                ).migrate(using: migrations)
            } catch {
                await migrations.close()
                throw error
            }
            await migrations.close()
            if !applied.isEmpty { logger.info("applied migrations", metadata: [LogKey.migrationsApplied: "\(applied)"]) }
        }
        configuration.callTimeout = settings.callTimeout
        // Opening a connection is bounded too (libpq's connect_timeout, at least 2 s), unless the URL sets it.
        configuration.connectTimeoutSeconds = max(2, settings.callTimeout.wholeSeconds)
        let pool = PostgresConnectionPool(configuration: configuration, size: settings.poolSize, logger: logger)
        return ServiceDatabase(configuration: configuration, pool: pool)
    }
}
