import RescindObservability

extension PostgresConnection {
    /// Runs `body` inside BEGIN … COMMIT.
    ///
    /// Commits when `body` returns; issues ROLLBACK and rethrows when `body` throws or the task
    /// was cancelled meanwhile (then `CancellationError`). A COMMIT that the server turned into
    /// a rollback (a statement failed and `body` swallowed the error) throws `.transactionAborted`.
    /// `body` runs in the caller's isolation; statements inside it use the given connection.
    /// - Throws: `.transactionAlreadyOpen` when called inside another transaction on this connection.
    @discardableResult
    public func transaction<Result>(
        isolationLevel: PostgresIsolationLevel? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        try await begin(isolationLevel)
        let result: Result
        do {
            result = try await body(self)
            try Task.checkCancellation()
        } catch {
            await rollback()
            throw error
        }
        try await commit()
        return result
    }

    private func begin(_ level: PostgresIsolationLevel?) throws {
        guard handle.transactionStatus == .idle else {
            throw PostgresError(
                code: .transactionAlreadyOpen, message: "a transaction is already open on this connection")
        }
        if let level {
            _ = try handle.execute("BEGIN ISOLATION LEVEL \(unescaped: level.rawValue)")
        } else {
            _ = try handle.execute("BEGIN")
        }
    }

    private func commit() throws {
        let tag = try handle.execute("COMMIT").commandTag
        guard tag == "COMMIT" else {
            throw PostgresError(
                code: .transactionAborted,
                message: "a statement failed earlier in the transaction, so COMMIT rolled it back")
        }
    }

    /// Best effort: a broken connection has no transaction left to roll back.
    private func rollback() {
        switch handle.transactionStatus {
        case .inTransaction, .failed: break
        case .idle, .active, .unknown: return
        }
        do {
            _ = try handle.execute("ROLLBACK")
        } catch {
            logger.warning("postgres ROLLBACK failed", metadata: [LogKey.error: "\(error)"])
        }
    }
}
