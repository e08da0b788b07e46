import CLibPQ
import Foundation
import Logging

/// Owns one `PGconn`, driven through libpq's asynchronous API (non-blocking mode) so that
/// every wait for the server is a `poll()` bounded by `callTimeout`: a server that stops
/// answering (a partition, a frozen host: TCP stays open and no reset comes) costs a
/// `.timedOut` error after the bound plus one probe, never a thread blocked for ever. A server
/// that is only slow (a revocation commit over a million records) is never cut: past the
/// bound the call asks the server, on a fresh connection, whether it still answers
/// (`LibPQConnection.serverAnswers`), and waits another bound when it does. A connection that timed
/// out is in an unknown state: it is closed at once (its statement cancelled on the side,
/// `CancelRequests`) and never used again.
///
/// Not thread-safe and deliberately not `Sendable`: it lives inside one `PostgresConnection`
/// actor (whose executor is a private serial queue) or on the listener's own thread, so every
/// libpq call on it is serialized and never runs on Swift's cooperative pool.
final class LibPQConnection {
    private var connection: OpaquePointer?
    /// Target of libpq's notice callback; libpq holds it unretained, this property keeps it alive
    /// until `PQfinish`.
    private let notices: NoticeLogger
    /// How long one statement (or one COPY chunk) waits for the server before it checks that
    /// the server still answers; `nil`: no bound.
    let callTimeout: Duration?
    /// What the connection was opened with, to probe the server on a fresh connection.
    let parameters: [(keyword: String, value: String)]

    private init(
        connection: OpaquePointer, parameters: [(keyword: String, value: String)], callTimeout: Duration?, logger: Logger
    ) {
        self.connection = connection
        self.parameters = parameters
        self.callTimeout = callTimeout
        self.notices = NoticeLogger(logger: logger)
        PQsetNoticeReceiver(connection, { context, result in
            guard let context, let result else { return }
            Unmanaged<NoticeLogger>.fromOpaque(context).takeUnretainedValue().log(result)
        }, Unmanaged.passUnretained(notices).toOpaque())
    }

    deinit {
        close()
    }

    /// Opens a connection; blocks for up to `connect_timeout`.
    static func connect(
        _ parameters: [(keyword: String, value: String)], callTimeout: Duration? = nil, logger: Logger
    ) throws -> LibPQConnection {
        let opened = withKeywordArrays(parameters) { keywords, values in PQconnectdbParams(keywords, values, 0) }
        guard let connection = opened else {
            throw PostgresError(code: .connectionFailed, message: "libpq could not allocate a connection")
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = firstLines(of: PQerrorMessage(connection)) ?? "connection failed"
            PQfinish(connection)
            throw PostgresError(code: .connectionFailed, message: message)
        }
        guard PQsetnonblocking(connection, 1) == 0 else {
            PQfinish(connection)
            throw PostgresError(code: .connectionFailed, message: "libpq could not switch the connection to non-blocking mode")
        }
        return LibPQConnection(connection: connection, parameters: parameters, callTimeout: callTimeout, logger: logger)
    }

    /// libpq's `keywords`/`values` arrays (C strings, NULL-terminated) for `body`, freed after it.
    static func withKeywordArrays<T>(
        _ parameters: [(keyword: String, value: String)],
        _ body: ([UnsafePointer<CChar>?], [UnsafePointer<CChar>?]) -> T
    ) -> T {
        let keywords = parameters.map { strdup($0.keyword) }
        let values = parameters.map { strdup($0.value) }
        defer {
            keywords.forEach { free($0) }
            values.forEach { free($0) }
        }
        return body(keywords.map { UnsafePointer($0) } + [nil], values.map { UnsafePointer($0) } + [nil])
    }

    /// Closes the socket (sending Terminate); later calls throw `.connectionClosed`. Inside
    /// `withConnection` (a statement that timed out closes its connection) the `PGconn` is
    /// freed only once the outermost body returns: the body, or code it swallowed an error
    /// for, may still hold the pointer, and must never touch freed memory.
    func close() {
        guard bodiesRunning == 0 else {
            closeRequested = true
            return
        }
        if let connection {
            PQfinish(connection)
            self.connection = nil
        }
    }

    /// Bodies of `withConnection` running (nested calls count each), and whether `close()`
    /// was asked meanwhile.
    private var bodiesRunning = 0
    private var closeRequested = false

    /// Scoped access to the `PGconn`, valid until `body` returns.
    /// - Throws: `.connectionClosed` once the connection was closed, or asked to close.
    func withConnection<T>(_ body: (OpaquePointer) throws -> T) throws -> T {
        guard let connection, !closeRequested else {
            throw PostgresError(code: .connectionClosed, message: "the connection was closed")
        }
        bodiesRunning += 1
        defer {
            bodiesRunning -= 1
            if bodiesRunning == 0, closeRequested {
                closeRequested = false
                close()
            }
        }
        return try body(connection)
    }

    var isClosed: Bool { connection == nil || closeRequested }

    var backendPID: Int32 { connection.map { PQbackendPID($0) } ?? 0 }

    var transactionStatus: TransactionStatus {
        guard let connection else { return .unknown }
        switch PQtransactionStatus(connection) {
        case PQTRANS_IDLE: return .idle
        case PQTRANS_INTRANS: return .inTransaction
        case PQTRANS_INERROR: return .failed
        case PQTRANS_ACTIVE: return .active
        default: return .unknown
        }
    }

    enum TransactionStatus { case idle, active, inTransaction, failed, unknown }

    /// Reads whatever the server sent meanwhile without blocking, so a connection the server
    /// terminated (a FATAL message, then end of file) is noticed before it is used.
    func isAlive() -> Bool {
        guard let connection, !closeRequested else { return false }
        // Each PQconsumeInput reads what is buffered now; end of file shows up on the read after
        // the server's last message, so read until the socket has nothing more (bounded).
        for _ in 0..<4 {
            guard PQstatus(connection) == CONNECTION_OK else { return false }
            guard (try? waitForInput(timeoutMilliseconds: 0)) == true else { break }
            guard PQconsumeInput(connection) == 1 else { return false }
        }
        while let notification = PQnotifies(connection) { PQfreemem(notification) }
        return PQstatus(connection) == CONNECTION_OK && !notices.receivedFatal
    }

    // MARK: Statements

    /// Runs one statement with binary parameters and binary results (`PQsendQueryParams`).
    /// - Throws: `.timedOut` when the server does not answer within `callTimeout` (the
    ///   connection is then closed).
    func execute(_ query: PostgresQuery) throws -> LibPQResult {
        try withConnection { connection in
            let deadline = Deadline(callTimeout)
            let bindings = query.bindings
            var empty: CChar = 0
            let sent = withUnsafePointer(to: &empty) { emptyValue in
                bindings.storage.withUnsafeBytes { storage in
                    // A non-NULL empty value still needs a non-nil pointer.
                    let base = storage.baseAddress?.assumingMemoryBound(to: CChar.self) ?? emptyValue
                    let values: [UnsafePointer<CChar>?] = bindings.ranges.map { range in
                        range.map { base + $0.lowerBound }
                    }
                    let lengths = bindings.ranges.map { Int32($0?.count ?? 0) }
                    let formats = [Int32](repeating: 1, count: bindings.count)
                    return PQsendQueryParams(
                        connection, query.sql, Int32(bindings.count), bindings.types, values, lengths, formats, 1)
                }
            }
            guard sent == 1 else { throw connectionError(connection) }
            return try checked(awaitResult(on: connection, deadline: deadline), on: connection)
        }
    }

    /// Runs SQL text that may hold several statements and no parameters (`PQsendQuery`), e.g. a
    /// migration file. Results are in text format; only the last statement's is returned.
    func execute(script: String) throws -> LibPQResult {
        try withConnection { connection in
            let deadline = Deadline(callTimeout)
            guard PQsendQuery(connection, script) == 1 else { throw connectionError(connection) }
            return try checked(awaitResult(on: connection, deadline: deadline), on: connection)
        }
    }

    /// Accepts a result that completed a command; turns anything else into a `PostgresError`.
    func checked(
        _ result: OpaquePointer?, on connection: OpaquePointer,
        accepting accepted: [ExecStatusType] = [PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY]
    ) throws -> LibPQResult {
        guard let result else { throw connectionError(connection) }
        let wrapped = LibPQResult(result)
        let status = wrapped.status
        if accepted.contains(status) { return wrapped }
        switch status {
        case PGRES_FATAL_ERROR, PGRES_NONFATAL_ERROR:
            throw wrapped.error(
                connectionLost: PQstatus(connection) != CONNECTION_OK,
                connectionMessage: Self.firstLines(of: PQerrorMessage(connection)) ?? "statement failed")
        case PGRES_COPY_IN:
            // Plain statements must not start COPY: leave the connection usable again.
            _ = try? endCopy(failure: "COPY FROM STDIN is only supported through copyFrom")
            throw PostgresError(code: .unexpectedResult, message: "COPY FROM STDIN must use copyFrom(table:columns:)")
        default:
            throw PostgresError(
                code: .unexpectedResult, message: "unexpected libpq result status \(status.rawValue)")
        }
    }

    /// The connection-level error, for when libpq returned no result at all.
    func connectionError(_ connection: OpaquePointer) -> PostgresError {
        let lost = PQstatus(connection) != CONNECTION_OK
        return PostgresError(
            code: lost ? .connectionLost : .unexpectedResult,
            message: Self.firstLines(of: PQerrorMessage(connection)) ?? "libpq returned no result")
    }

    /// libpq's message without DETAIL/HINT lines (which can echo values), on one line.
    static func firstLines(of message: UnsafePointer<CChar>?) -> String? {
        guard let message else { return nil }
        let lines = String(cString: message)
            .split(separator: "\n")
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("DETAIL:") && !$0.hasPrefix("HINT:") }
        return lines.isEmpty ? nil : lines.joined(separator: " ")
    }
}
