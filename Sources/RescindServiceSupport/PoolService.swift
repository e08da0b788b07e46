import RescindPostgres
import ServiceLifecycle

/// Closes a service's connection pool after every other service stopped.
///
/// Listed first among a service's services, it is stopped last (graceful shutdown runs in
/// reverse order), so the relays and consumers keep their connections while they finish.
public struct PoolService: Service {
    public let pool: PostgresConnectionPool

    public init(pool: PostgresConnectionPool) {
        self.pool = pool
    }

    public func run() async throws {
        try? await gracefulShutdown()
        await pool.close()
    }
}
