import Foundation
import CLibPQ
import RescindObservability
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Waiting for the server with a bound: every statement is sent with libpq's asynchronous
/// calls and its answer awaited in `poll()` on the socket until `callTimeout` passes. Then
/// the server is asked on a fresh connection whether it answers at all (`serverAnswers`):
/// when it does, the statement is only slow and the wait goes on for another bound; when it
/// does not (frozen, partitioned, gone), the call ends with `.timedOut`.
extension LibPQConnection {
    /// Sends what libpq has queued, then collects the statement's results until libpq has none
    /// left (or one starts COPY), every wait bounded by `deadline`. As `PQexec`: the last
    /// result, or the error result when a statement failed.
    /// - Throws: `.timedOut` (the connection is then closed), `.connectionLost`.
    func awaitResult(on connection: OpaquePointer, deadline: Deadline) throws -> OpaquePointer? {
        try flush(connection, deadline: deadline)
        var kept: OpaquePointer?
        do {
            while true {
                try waitUntilIdle(connection, deadline: deadline)
                guard let result = PQgetResult(connection) else { break }
                let status = PQresultStatus(result)
                if let previous = kept, PQresultStatus(previous) == PGRES_FATAL_ERROR {
                    PQclear(result)
                } else {
                    if let previous = kept { PQclear(previous) }
                    kept = result
                }
                if status == PGRES_COPY_IN || status == PGRES_COPY_OUT || status == PGRES_COPY_BOTH { break }
            }
        } catch {
            if let kept { PQclear(kept) }
            throw error
        }
        return kept
    }

    /// Reads the server's answer until a whole result is buffered (`PQisBusy` is false).
    func waitUntilIdle(_ connection: OpaquePointer, deadline: Deadline) throws {
        while PQisBusy(connection) == 1 {
            _ = try wait(on: connection, for: Int16(POLLIN), deadline: deadline)
            guard PQconsumeInput(connection) == 1 else { throw connectionError(connection) }
        }
    }

    /// Sends everything libpq has queued (non-blocking mode queues what the socket does not take).
    func flush(_ connection: OpaquePointer, deadline: Deadline) throws {
        while true {
            let flushed = PQflush(connection)
            if flushed == 0 { return }
            guard flushed == 1 else { throw connectionError(connection) }
            // The server may be waiting for us to read before it reads more (libpq's advice).
            let events = try wait(on: connection, for: Int16(POLLOUT) | Int16(POLLIN), deadline: deadline)
            if events & Int16(POLLIN) != 0, PQconsumeInput(connection) != 1 { throw connectionError(connection) }
        }
    }

    /// `poll()` on the socket until one of `events` (or an error or hang-up) or the deadline.
    /// - Returns: the events that happened.
    /// - Throws: `.timedOut` once the deadline passed (the connection is closed first).
    func wait(on connection: OpaquePointer, for events: Int16, deadline: Deadline) throws -> Int16 {
        let socket = PQsocket(connection)
        guard socket >= 0 else { throw connectionError(connection) }
        while true {
            let remaining = deadline.remainingMilliseconds
            if remaining == 0 {
                guard let bound = callTimeout, Self.serverAnswers(parameters, within: bound) else { throw timedOut(connection) }
                deadline.renew()
                continue
            }
            var descriptor = pollfd(fd: socket, events: events, revents: 0)
            let ready = poll(&descriptor, 1, remaining)
            if ready > 0 { return descriptor.revents }
            if ready < 0, errno != EINTR {
                throw PostgresError(code: .connectionLost, message: "poll() on the connection socket failed (errno \(errno))")
            }
        }
    }

    /// The server did not answer in time: the statement's outcome and the session's state are
    /// unknown, so the connection is closed (never reused) and the statement cancelled on the
    /// side (`CancelRequests`), so that a slow one does not go on holding its locks.
    private func timedOut(_ connection: OpaquePointer) -> PostgresError {
        CancelRequests.send(for: connection)
        close()
        let bound = callTimeout.map { "\($0)" } ?? "its deadline"
        return PostgresError(
            code: .timedOut,
            message: "PostgreSQL did not answer within \(bound), nor a fresh connection's probe; the connection was closed and its statement cancelled")
    }
}

/// When a statement's wait for the server ends, unless the server still answers (`renew`).
/// One per call, used on the connection's own thread.
final class Deadline {
    private let timeout: Duration?
    private var end: ContinuousClock.Instant?

    init(_ timeout: Duration?) {
        self.timeout = timeout
        end = timeout.map { ContinuousClock.now + $0 }
    }

    /// Another bound from now (the server answered a probe: the statement is slow, not lost).
    func renew() {
        end = timeout.map { ContinuousClock.now + $0 }
    }

    /// For `poll()`: -1 without a bound, else the milliseconds left (rounded up, 0 once passed).
    var remainingMilliseconds: Int32 {
        guard let end else { return -1 }
        let left = ContinuousClock.now.duration(to: end)
        guard left > .zero else { return 0 }
        let milliseconds = left.roundedUpMilliseconds
        return Int32(clamping: max(1, milliseconds))
    }
}

/// Cancel requests for statements whose connection timed out. `PQcancel` connects to the
/// postmaster and waits for it to close that connection, with no timeout of its own: against
/// a frozen server it waits until the server thaws. So each runs on a thread of its own, at
/// most `limit` at once (beyond, the statement is left to end when its closed connection is
/// noticed), and never holds up the caller.
enum CancelRequests {
    static let limit = 8
    private static let outstanding = Mutex(0)

    static func send(for connection: OpaquePointer) {
        guard let cancel = PQgetCancel(connection) else { return }
        let admitted = outstanding.withLock { count in
            guard count < limit else { return false }
            count += 1
            return true
        }
        guard admitted else {
            PQfreeCancel(cancel)
            return
        }
        let handle = CancelHandle(pointer: cancel)
        let thread = Thread {
            var message = [CChar](repeating: 0, count: 256)
            _ = PQcancel(handle.pointer, &message, Int32(message.count))
            PQfreeCancel(handle.pointer)
            outstanding.withLock { $0 -= 1 }
        }
        thread.name = "rescind.postgres.cancel"
        thread.start()
    }

    /// Cancel requests in flight (for tests).
    static var inFlight: Int { outstanding.withLock { $0 } }
}

/// A `PGcancel`, used by exactly one thread after it is handed over.
private struct CancelHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}
