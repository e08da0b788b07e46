import CLibPQ

/// The COPY FROM STDIN sub-protocol (`PQputCopyData`/`PQputCopyEnd`), blocking mode.
extension LibPQConnection {
    /// Sends a `COPY … FROM STDIN` statement; the server then expects copy data.
    func beginCopy(_ sql: String) throws {
        try withConnection { connection in
            _ = try checked(PQexec(connection, sql), on: connection, accepting: [PGRES_COPY_IN])
        }
    }

    /// Sends one chunk of copy data; blocks while libpq's send buffer is full.
    func putCopyData(_ bytes: [UInt8]) throws {
        guard !bytes.isEmpty else { return }
        try withConnection { connection in
            let status = bytes.withUnsafeBytes { chunk in
                PQputCopyData(connection, chunk.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(chunk.count))
            }
            guard status == 1 else { throw connectionError(connection) }
        }
    }

    /// Ends the COPY: with `failure == nil` the server commits the rows to the statement,
    /// otherwise it aborts the COPY with that message. Returns the number of rows copied.
    /// Always drains every pending result so the connection is usable afterwards.
    @discardableResult
    func endCopy(failure: String?) throws -> Int {
        try withConnection { connection in
            let endStatus: Int32 = if let failure { PQputCopyEnd(connection, failure) } else { PQputCopyEnd(connection, nil) }
            var firstError: (any Error)?
            var rows = 0
            while let result = PQgetResult(connection) {
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
