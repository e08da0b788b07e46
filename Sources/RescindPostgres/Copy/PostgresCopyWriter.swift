/// Encodes rows for a binary `COPY … FROM STDIN` and sends them in chunks of about 256 KiB.
///
/// Handed to the closure of `PostgresConnection.copyFrom`; valid only while that closure runs.
public final class PostgresCopyWriter {
    /// Chunk size for `PQputCopyData`: large enough to amortize calls, small enough to stream.
    static let flushThreshold = 256 * 1024
    private static let signature: [UInt8] = Array("PGCOPY\n".utf8) + [0xFF, 0x0D, 0x0A, 0x00]

    private let connection: LibPQConnection
    private let columnNames: [String]
    private let columnTypes: [PostgresDataType]
    private var buffer: [UInt8] = []
    private var isOpen = true

    /// Rows appended so far.
    public private(set) var rowCount = 0

    init(connection: LibPQConnection, columnNames: [String], columnTypes: [PostgresDataType]) {
        self.connection = connection
        self.columnNames = columnNames
        self.columnTypes = columnTypes
        buffer.reserveCapacity(Self.flushThreshold + 64 * 1024)
        buffer.append(contentsOf: Self.signature)
        buffer.appendBigEndian(Int32(0))  // flags: no OIDs
        buffer.appendBigEndian(Int32(0))  // header extension length
    }

    /// Appends one row: one value per target column, in column order; `nil` is NULL.
    ///
    /// A value's Swift type must match its column (e.g. `Int` → bigint, `Int32` → integer),
    /// since binary COPY has no implicit casts.
    /// - Throws: `.invalidCopyRow` for a wrong value count or type (the row is not written),
    ///   or a connection error while sending a full chunk.
    public func append<each Value: PostgresEncodable>(_ values: repeat each Value) throws {
        guard isOpen else {
            throw PostgresError(code: .invalidCopyRow, message: "the COPY writer is used after copyFrom returned")
        }
        let rowStart = buffer.count
        do {
            buffer.appendBigEndian(Int16(columnTypes.count))
            var index = 0
            for value in repeat each values {
                guard index < columnTypes.count else { throw countMismatch() }
                try checkType(of: value, column: index)
                if value.isPostgresNull {
                    buffer.appendBigEndian(Int32(-1))
                } else {
                    let lengthOffset = buffer.count
                    buffer.appendBigEndian(Int32(0))
                    value.encode(into: &buffer)
                    buffer.setBigEndian(Int32(buffer.count - lengthOffset - 4), at: lengthOffset)
                }
                index += 1
            }
            guard index == columnTypes.count else { throw countMismatch() }
        } catch {
            buffer.removeSubrange(rowStart...)
            throw error
        }
        rowCount += 1
        if buffer.count >= Self.flushThreshold { try flush() }
    }

    /// Writes the trailer and sends what is buffered; the writer is unusable afterwards.
    func finish() throws {
        buffer.appendBigEndian(Int16(-1))
        try flush()
        isOpen = false
    }

    /// Marks the writer unusable without sending anything more (the COPY is being aborted).
    func invalidate() {
        isOpen = false
    }

    private func flush() throws {
        try connection.putCopyData(buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    private func checkType<Value: PostgresEncodable>(of value: Value, column index: Int) throws {
        let sent = Value.postgresType
        let expected = columnTypes[index]
        // Types this module does not know (enums, domains, numeric, arrays…) are left to the server.
        guard sent == expected || !expected.isKnown || (sent.isTextual && expected.isTextual) else {
            throw PostgresError(
                code: .invalidCopyRow, message: "a \(Value.self) (\(sent)) cannot be copied into a \(expected) column",
                column: columnNames[index])
        }
    }

    private func countMismatch() -> PostgresError {
        PostgresError(code: .invalidCopyRow, message: "each COPY row needs exactly \(columnTypes.count) values")
    }
}
