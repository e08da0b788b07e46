/// The one error type of RescindPostgres.
///
/// Safe to log: it carries the server's primary message, SQLSTATE and object names
/// (constraint, table, column), but never the server's DETAIL or HINT (which can echo
/// row values), never a bound parameter value and never the connection password.
public struct PostgresError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, stable across releases; switch on this, not on `message`.
    public let code: Code
    /// The five-character SQLSTATE when the server (or libpq) reported one, e.g. `23505`.
    public let sqlState: String?
    /// The server's primary message, or a client-side explanation.
    public let message: String
    /// The violated constraint, when the server named one.
    public let constraint: String?
    /// The table the error concerns, when the server named one.
    public let table: String?
    /// The column the error concerns: named by the server, or the result column that failed to decode.
    public internal(set) var column: String?

    init(
        code: Code,
        message: String,
        sqlState: String? = nil,
        constraint: String? = nil,
        table: String? = nil,
        column: String? = nil
    ) {
        self.code = code
        self.message = message
        self.sqlState = sqlState
        self.constraint = constraint
        self.table = table
        self.column = column
    }

    public var description: String {
        var text = "PostgresError.\(code)"
        if let sqlState { text += " [\(sqlState)]" }
        text += ": \(message)"
        var context: [String] = []
        if let constraint { context.append("constraint \(constraint)") }
        if let table { context.append("table \(table)") }
        if let column { context.append("column \(column)") }
        if !context.isEmpty { text += " (\(context.joined(separator: ", ")))" }
        return text
    }
}

extension PostgresError {
    /// A stable, machine-readable error category.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The connection URL or an option could not be used.
        public static let invalidConfiguration = Code(rawValue: "invalidConfiguration")
        /// No connection could be established (server down, bad credentials, timeout).
        public static let connectionFailed = Code(rawValue: "connectionFailed")
        /// An established connection broke; the statement's outcome is unknown.
        public static let connectionLost = Code(rawValue: "connectionLost")
        /// The server did not answer within `PostgresConfiguration.callTimeout` (or no pooled
        /// connection came free within it); the statement's outcome is unknown and its
        /// connection was closed.
        public static let timedOut = Code(rawValue: "timedOut")
        /// The connection was closed by this process and can no longer be used.
        public static let connectionClosed = Code(rawValue: "connectionClosed")
        /// The server rejected a statement; see `sqlState`.
        public static let server = Code(rawValue: "server")
        /// A statement failed earlier in the transaction, so COMMIT rolled it back.
        public static let transactionAborted = Code(rawValue: "transactionAborted")
        /// `transaction` was called while a transaction was already open on the connection.
        public static let transactionAlreadyOpen = Code(rawValue: "transactionAlreadyOpen")
        /// A result column's PostgreSQL type cannot be decoded as the requested Swift type.
        public static let typeMismatch = Code(rawValue: "typeMismatch")
        /// A result column is NULL but a non-optional Swift type was requested.
        public static let unexpectedNull = Code(rawValue: "unexpectedNull")
        /// A binary value is malformed for its type (wrong length, invalid UTF-8, unknown raw value).
        public static let invalidValue = Code(rawValue: "invalidValue")
        /// A result has no column with the requested index or name.
        public static let columnNotFound = Code(rawValue: "columnNotFound")
        /// A COPY row does not match the target columns (count or type).
        public static let invalidCopyRow = Code(rawValue: "invalidCopyRow")
        /// libpq returned something this module did not expect.
        public static let unexpectedResult = Code(rawValue: "unexpectedResult")
        /// The pool was closed.
        public static let poolClosed = Code(rawValue: "poolClosed")
        /// The migrations directory or a file name in it is unusable.
        public static let invalidMigration = Code(rawValue: "invalidMigration")
        /// An already applied migration file was changed afterwards.
        public static let migrationChecksumMismatch = Code(rawValue: "migrationChecksumMismatch")
        /// A migration's SQL failed; it was rolled back and not recorded.
        public static let migrationFailed = Code(rawValue: "migrationFailed")
    }
}

extension PostgresError {
    /// Whether the error says the database cannot be reached or did not answer (rather than
    /// refusing the statement): a retry later may succeed, and an HTTP service answers 503.
    public var isUnavailable: Bool {
        [.connectionFailed, .connectionLost, .connectionClosed, .timedOut, .poolClosed].contains(code)
    }

    /// For custom `PostgresDecodable` conformances: the column's type is not one this Swift type reads.
    public static func typeMismatch(_ swiftType: Any.Type, actual: PostgresDataType) -> PostgresError {
        PostgresError(code: .typeMismatch, message: "cannot decode \(actual) as \(swiftType)")
    }

    /// For custom `PostgresDecodable` conformances: the bytes are not a valid value (the value itself is never included).
    public static func invalidValue(_ swiftType: Any.Type, type: PostgresDataType, reason: String) -> PostgresError {
        PostgresError(code: .invalidValue, message: "invalid \(type) value for \(swiftType): \(reason)")
    }
}
