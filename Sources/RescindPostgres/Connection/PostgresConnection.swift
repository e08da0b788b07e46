import Logging
import RescindObservability

/// One PostgreSQL session over libpq.
///
/// Every libpq call runs on the connection's own serial dispatch queue (the actor's executor),
/// never on Swift's cooperative pool, so a slow query blocks only this connection.
/// A connection serves one task at a time: statements from concurrently running tasks would
/// interleave inside each other's transactions. Share work through `PostgresConnectionPool`.
public actor PostgresConnection {
    private let executor: SerialQueueExecutor
    let handle: LibPQConnection
    let logger: Logger

    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        executor.asUnownedSerialExecutor()
    }

    private init(executor: SerialQueueExecutor, handle: LibPQConnection, logger: Logger) {
        self.executor = executor
        self.handle = handle
        self.logger = logger
    }

    /// Opens a connection.
    /// - Throws: `PostgresError` `.connectionFailed` (message from libpq, never the password).
    public static func connect(configuration: PostgresConfiguration, logger: Logger) async throws -> PostgresConnection {
        let executor = SerialQueueExecutor(label: "rescind.postgres.connection")
        let parameters = configuration.connectionParameters
        let callTimeout = configuration.callTimeout
        let handle = try await withCheckedThrowingContinuation { continuation in
            executor.queue.async {
                do {
                    continuation.resume(
                        returning: try LibPQConnection.connect(parameters, callTimeout: callTimeout, logger: logger))
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
        logger.debug("postgres connected", metadata: [LogKey.backendPID: "\(handle.backendPID)"])
        return PostgresConnection(executor: executor, handle: handle, logger: logger)
    }

    /// Closes the connection; further use throws `.connectionClosed`. Also done on deinit.
    public func close() {
        handle.close()
    }

    /// Whether `close()` was called.
    public var isClosed: Bool { handle.isClosed }

    /// The server process serving this session (`pg_backend_pid()`), 0 once closed.
    public var backendPID: Int32 { handle.backendPID }

    /// Runs a statement and returns all rows.
    /// - Throws: `PostgresError` (`.server` with `sqlState`, `.connectionLost`, `.timedOut`
    ///   past `PostgresConfiguration.callTimeout`, …).
    public func query(_ query: PostgresQuery) throws -> [PostgresRow] {
        try handle.execute(query).rows()
    }

    /// Runs a statement and returns the rows it affected (INSERT/UPDATE/DELETE/…), 0 for others.
    @discardableResult
    public func execute(_ query: PostgresQuery) throws -> Int {
        try handle.execute(query).affectedRows
    }

    /// Runs trusted SQL text that may contain several statements and no parameters, such as a
    /// migration file. Inside `transaction` it joins the transaction; otherwise the statements
    /// run in one implicit transaction.
    public func executeScript(_ sql: String) throws {
        _ = try handle.execute(script: sql)
    }

    /// Sends a notification (`pg_notify`) to listeners of `channel`; delivered on commit when
    /// called inside a transaction.
    public func notify(channel: String, payload: String = "") throws {
        _ = try handle.execute("SELECT pg_notify(\(channel), \(payload))")
    }

    /// For the pool: drops a connection that the server closed and ends any transaction left
    /// open, so the next user gets a clean session.
    func prepareForReuse() -> Bool {
        guard handle.isAlive() else { return false }
        switch handle.transactionStatus {
        case .idle:
            return true
        case .inTransaction, .failed:
            logger.warning("postgres connection returned inside a transaction; rolling back")
            return (try? handle.execute("ROLLBACK")) != nil && handle.transactionStatus == .idle
        case .active, .unknown:
            return false
        }
    }
}
