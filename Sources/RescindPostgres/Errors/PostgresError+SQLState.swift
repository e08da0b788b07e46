/// SQLSTATE checks callers branch on (retry, map to HTTP 409, …).
extension PostgresError {
    /// `23505`: a unique or primary-key constraint rejected the row.
    public var isUniqueViolation: Bool { sqlState == "23505" }
    /// `23503`: a foreign-key constraint rejected the change.
    public var isForeignKeyViolation: Bool { sqlState == "23503" }
    /// `23514`: a CHECK constraint rejected the row.
    public var isCheckViolation: Bool { sqlState == "23514" }
    /// `40001`: a SERIALIZABLE or REPEATABLE READ transaction lost a race; retry the whole transaction.
    public var isSerializationFailure: Bool { sqlState == "40001" }
    /// `40P01`: the server broke a deadlock by aborting this transaction; retry the whole transaction.
    public var isDeadlockDetected: Bool { sqlState == "40P01" }
    /// `57014`: the statement was cancelled (statement_timeout or cancel request).
    public var isQueryCanceled: Bool { sqlState == "57014" }

    /// Whether retrying the whole transaction may succeed.
    public var isTransient: Bool {
        isSerializationFailure || isDeadlockDetected || code == .connectionLost
    }
}
