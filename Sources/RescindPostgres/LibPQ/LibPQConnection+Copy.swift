import CLibPQ

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The COPY FROM STDIN sub-protocol (`PQputCopyData`/`PQputCopyEnd`), non-blocking mode:
/// every wait for the server is bounded by `callTimeout` (per chunk, and for the end).
extension LibPQConnection {
    /// Sends a `COPY … FROM STDIN` statement; the server then expects copy data.
    func beginCopy(_ sql: String) throws {
        try withConnection { connection in
            let deadline = Deadline(callTimeout)
            guard PQsendQuery(connection, sql) == 1 else { throw connectionError(connection) }
            _ = try checked(awaitResult(on: connection, deadline: deadline), on: connection, accepting: [PGRES_COPY_IN])
        }
    }

    /// Sends one chunk of copy data; waits (bounded) while the socket takes no more.
    func putCopyData(_ bytes: [UInt8]) throws {
        guard !bytes.isEmpty else { return }
        try withConnection { connection in
            let deadline = Deadline(callTimeout)
            while true {
                let status = bytes.withUnsafeBytes { chunk in
                    PQputCopyData(connection, chunk.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(chunk.count))
                }
                if status == 1 { break }
                guard status == 0 else { throw connectionError(connection) }
                try flush(connection, deadline: deadline)
            }
            try flush(connection, deadline: deadline)
        }
    }

    /// Ends the COPY: with `failure == nil` the server commits the rows to the statement,
    /// otherwise it aborts the COPY with that message. Returns the number of rows copied.
    /// Always drains every pending result so the connection is usable afterwards.
    @discardableResult
    func endCopy(failure: String?) throws -> Int {
        try withConnection { connection in
            let deadline = Deadline(callTimeout)
            var endStatus: Int32
            while true {
                endStatus = if let failure { PQputCopyEnd(connection, failure) } else { PQputCopyEnd(connection, nil) }
                guard endStatus == 0 else { break }
                _ = try wait(on: connection, for: Int16(POLLOUT), deadline: deadline)
            }
            if endStatus == 1 { try flush(connection, deadline: deadline) }
            var firstError: (any Error)?
            var rows = 0
            while true {
                try waitUntilIdle(connection, deadline: deadline)
                guard let result = PQgetResult(connection) else { break }
                do {
                    rows = try checked(result, on: connection).affectedRows
                } catch {
                    firstError = firstError ?? error
                }
            }
            if let firstError { throw firstError }
            guard endStatus == 1 else { throw connectionError(connection) }
            return rows
        }
    }
}
