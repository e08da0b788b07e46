import Logging

/// A fixed-size pool of `PostgresConnection`s.
///
/// Connections open lazily, up to `size`. When all are in use, callers wait in FIFO order.
/// A connection is checked before each use (reading pending input, so one the server
/// terminated is noticed) and after each use (left-open transactions are rolled back); a broken
/// one is closed and its slot reopened, so a failed server restart heals by itself.
public actor PostgresConnectionPool {
    /// Maximum number of server connections this pool opens.
    public nonisolated let size: Int
    private let configuration: PostgresConfiguration
    private let logger: Logger

    /// Connections ready for use (most recently returned last).
    private var idle: [PostgresConnection] = []
    /// Connections open, being opened, or reserved for a waiter: never more than `size`.
    private var slotsInUse = 0
    /// Tasks waiting for a connection, oldest first.
    private var waiters: [(id: UInt64, continuation: CheckedContinuation<Lease, any Error>)] = []
    private var nextWaiterID: UInt64 = 0
    private var isClosed = false

    /// What `checkout` grants: a ready connection, or the right to open a new one.
    enum Lease: Sendable {
        case connection(PostgresConnection)
        case newConnection
    }

    /// - Parameter size: maximum number of connections (at least 1).
    public init(configuration: PostgresConfiguration, size: Int = 4, logger: Logger) {
        precondition(size >= 1, "a pool needs at least one connection")
        self.configuration = configuration
        self.size = size
        self.logger = logger
    }

    /// Runs `body` with exclusive use of a connection, then returns it to the pool.
    ///
    /// `body` runs in the caller's isolation. Waits (FIFO) while all connections are in use;
    /// a cancelled wait throws `CancellationError`, one longer than the configuration's
    /// `callTimeout` `.timedOut` if the server then does not answer a probe either (a server
    /// that answers keeps the caller waiting: its connections are busy, not lost).
    /// - Throws: `.poolClosed`, `.connectionFailed`, `.timedOut`, or whatever `body` throws.
    @discardableResult
    public func withConnection<Result>(
        isolation: isolated (any Actor)? = #isolation,
        _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        let connection = try await acquire()
        let result: Result
        do {
            result = try await body(connection)
        } catch {
            await release(connection)
            throw error
        }
        await release(connection)
        return result
    }

    /// `withConnection` + `PostgresConnection.transaction`.
    @discardableResult
    public func transaction<Result>(
        isolationLevel: PostgresIsolationLevel? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        try await withConnection { connection in
            try await connection.transaction(isolationLevel: isolationLevel, body)
        }
    }

    /// Closes idle connections and fails current and future waiters with `.poolClosed`;
    /// connections in use are closed when returned.
    public func close() async {
        isClosed = true
        let waiting = waiters
        waiters.removeAll()
        for waiter in waiting {
            waiter.continuation.resume(throwing: Self.closedError)
        }
        let connections = idle
        idle.removeAll()
        slotsInUse -= connections.count
        for connection in connections {
            await connection.close()
        }
    }

    // MARK: Checkout and return

    /// A healthy connection: an idle one, or a newly opened one in a free (or freed) slot.
    private nonisolated func acquire() async throws -> PostgresConnection {
        if case .connection(let connection) = try await checkout() {
            if await connection.prepareForReuse() { return connection }
            logger.notice("postgres pool replacing a broken connection")
            await connection.close()
        }
        // We hold a slot: open a connection in it, or give the slot back.
        do {
            return try await PostgresConnection.connect(configuration: configuration, logger: logger)
        } catch {
            await freeSlot()
            throw error
        }
    }

    private nonisolated func release(_ connection: PostgresConnection) async {
        let reusable = await connection.prepareForReuse()
        if !reusable {
            logger.notice("postgres pool discarding a broken connection")
            await connection.close()
        }
        await checkin(reusable ? connection : nil)
    }

    private func checkout() async throws -> Lease {
        guard !isClosed else { throw Self.closedError }
        if waiters.isEmpty {
            if let connection = idle.popLast() { return .connection(connection) }
            if slotsInUse < size {
                slotsInUse += 1
                return .newConnection
            }
        }
        nextWaiterID += 1
        let id = nextWaiterID
        if let timeout = configuration.callTimeout {
            // Bounded like a statement: a pool whose every connection waits on a server that
            // stopped answering fails its waiters too, rather than queueing them for ever; one
            // whose connections are busy on a server that answers keeps them waiting.
            let parameters = configuration.connectionParameters
            Task { [weak self] in
                while true {
                    try? await Task.sleep(for: timeout)
                    guard let self, await self.isWaiting(id) else { return }
                    if await LibPQConnection.serverAnswers(parameters, within: timeout) { continue }
                    await self.timeOutWaiter(id, after: timeout)
                    return
                }
            }
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                waiters.append((id, continuation))
            }
        } onCancel: {
            Task { await self.cancelWaiter(id) }
        }
    }

    /// Returns a connection (`nil`: it was broken and closed) to the oldest waiter or to `idle`.
    private func checkin(_ connection: PostgresConnection?) async {
        guard let connection else {
            freeSlot()
            return
        }
        if isClosed {
            slotsInUse -= 1
            await connection.close()
        } else if !waiters.isEmpty {
            waiters.removeFirst().continuation.resume(returning: .connection(connection))
        } else {
            idle.append(connection)
        }
    }

    /// A slot's connection is gone: hand the slot to the oldest waiter, who opens a new one.
    private func freeSlot() {
        if !isClosed, !waiters.isEmpty {
            waiters.removeFirst().continuation.resume(returning: .newConnection)
        } else {
            slotsInUse -= 1
        }
    }

    private func isWaiting(_ id: UInt64) -> Bool {
        waiters.contains { $0.id == id }
    }

    private func timeOutWaiter(_ id: UInt64, after timeout: Duration) {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else { return }
        waiters.remove(at: index).continuation.resume(
            throwing: PostgresError(
                code: .timedOut, message: "no database connection came free within \(timeout), and the server did not answer a probe"))
    }

    private func cancelWaiter(_ id: UInt64) {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else { return }
        waiters.remove(at: index).continuation.resume(throwing: CancellationError())
    }

    private static var closedError: PostgresError {
        PostgresError(code: .poolClosed, message: "the connection pool was closed")
    }

    /// Connections currently open or being opened (for tests and metrics).
    var openConnectionCount: Int { slotsInUse }
}
