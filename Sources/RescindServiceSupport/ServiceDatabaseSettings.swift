/// The database settings every service's configuration carries, each read from the
/// service's own `RESCIND_<SERVICE>_*` variables; `ServiceDatabase.open` takes them.
public protocol ServiceDatabaseSettings: Sendable {
    /// libpq connection URL.
    var url: String { get }
    /// The service's own schema.
    var schema: String { get }
    /// Connections in the pool.
    var poolSize: Int { get }
    /// Whether pending migrations are applied at start.
    var migrateOnStart: Bool { get }
    /// Directory of the schema's `*.sql` migrations.
    var migrationsDirectory: String { get }
    /// The longest a database call waits for an answer (`PostgresConfiguration.callTimeout`);
    /// `RESCIND_DATABASE_TIMEOUT_SECONDS`.
    var callTimeout: Duration { get }
}
