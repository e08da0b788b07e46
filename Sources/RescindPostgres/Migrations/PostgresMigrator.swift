import Foundation
import Logging
import RescindMacros
import RescindObservability

/// Applies the `*.sql` files of a directory to one PostgreSQL schema, once each, in order.
///
/// Files are named `<digits>_<description>.sql` (`0001_init.sql`) and applied in lexical order
/// of file name, each in its own transaction with `search_path` set to the schema, so
/// unqualified names land there. Files must not contain transaction control statements.
/// Applied files are recorded in `<schema>.schema_migrations` (version, name, SHA-256 checksum
/// of the file's bytes, applied_at). Re-running skips them; an applied file whose contents
/// changed is an error. Concurrent runs (several replicas starting at once) are serialized by
/// a PostgreSQL advisory lock per schema.
@MemberwiseInit
public struct PostgresMigrator: Sendable {
    public let directory: URL
    public let schema: String
    private let logger: Logger

    /// First key of the two-key advisory lock ("RSND"), so it cannot collide with app locks
    /// that use the one-key form; the second key is `hashtext(schema)`.
    private static let advisoryLockClass: Int32 = 0x5253_4E44

    /// Applies pending migrations using one pooled connection.
    @discardableResult
    public func migrate(using pool: PostgresConnectionPool) async throws -> [String] {
        try await pool.withConnection { try await migrate(on: $0) }
    }

    /// Applies pending migrations.
    /// - Returns: file names applied by this call, in order (empty when up to date).
    /// - Throws: `.invalidMigration` (bad directory or file name), `.migrationChecksumMismatch`
    ///   (an applied file changed; the message names it), `.migrationFailed` (a file's SQL failed:
    ///   it was rolled back and not recorded; later files were not attempted), or a connection error.
    @discardableResult
    public func migrate(on connection: PostgresConnection) async throws -> [String] {
        let migrations = try PostgresMigration.load(from: directory)
        try await connection.execute("SELECT pg_advisory_lock(\(Self.advisoryLockClass), hashtext(\(schema)))")
        do {
            let applied = try await applyPending(migrations, on: connection)
            try await unlock(connection)
            return applied
        } catch {
            try? await unlock(connection)
            throw error
        }
    }

    private func unlock(_ connection: PostgresConnection) async throws {
        try await connection.execute("SELECT pg_advisory_unlock(\(Self.advisoryLockClass), hashtext(\(schema)))")
    }

    private func applyPending(_ migrations: [PostgresMigration], on connection: PostgresConnection) async throws -> [String] {
        try await connection.execute("CREATE SCHEMA IF NOT EXISTS \(identifier: schema)")
        try await connection.execute("""
            CREATE TABLE IF NOT EXISTS \(identifier: schema).schema_migrations (
                version text PRIMARY KEY,
                name text NOT NULL,
                checksum text NOT NULL,
                applied_at timestamptz NOT NULL DEFAULT now()
            )
            """)
        var recorded: [String: String] = [:]
        for row in try await connection.query("SELECT version, checksum FROM \(identifier: schema).schema_migrations") {
            let (version, checksum) = try row.decode(String.self, String.self)
            recorded[version] = checksum
        }
        for version in Set(recorded.keys).subtracting(migrations.map(\.version)) {
            logger.warning("applied migration has no file", metadata: [LogKey.migrationVersion: "\(version)", LogKey.migrationSchema: "\(schema)"])
        }

        var applied: [String] = []
        for migration in migrations {
            let checksum = try await sha256Hex(migration.contents, on: connection)
            if let recordedChecksum = recorded[migration.version] {
                guard recordedChecksum == checksum else {
                    throw PostgresError(
                        code: .migrationChecksumMismatch,
                        message: "migration \(migration.fileName) was changed after it was applied to schema \(schema)")
                }
                continue
            }
            try await apply(migration, checksum: checksum, on: connection)
            logger.info("applied migration", metadata: [LogKey.migrationName: "\(migration.fileName)", LogKey.migrationSchema: "\(schema)"])
            applied.append(migration.fileName)
        }
        return applied
    }

    private func apply(_ migration: PostgresMigration, checksum: String, on connection: PostgresConnection) async throws {
        do {
            try await connection.transaction { connection in
                try await connection.execute("SET LOCAL search_path TO \(identifier: schema)")
                try await connection.executeScript(migration.sql)
                try await connection.execute("""
                    INSERT INTO \(identifier: schema).schema_migrations (version, name, checksum)
                    VALUES (\(migration.version), \(migration.fileName), \(checksum))
                    """)
            }
        } catch let error as PostgresError {
            throw PostgresError(
                code: .migrationFailed, message: "migration \(migration.fileName) failed: \(error.message)",
                sqlState: error.sqlState, constraint: error.constraint, table: error.table, column: error.column)
        }
    }

    /// Lowercase hex SHA-256, computed by PostgreSQL's `sha256()` (no crypto dependency here).
    private func sha256Hex(_ bytes: [UInt8], on connection: PostgresConnection) async throws -> String {
        let rows = try await connection.query("SELECT encode(sha256(\(bytes)), 'hex')")
        guard let row = rows.first else {
            throw PostgresError(code: .unexpectedResult, message: "sha256() returned no row")
        }
        return try row.decode(String.self, column: 0)
    }
}
