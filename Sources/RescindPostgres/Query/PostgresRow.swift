/// One result row, its values copied out of libpq in binary format.
///
/// Decode columns by index or name; decoding checks the column's type and NULL-ness and
/// throws `PostgresError` naming the column (never its value) on a mismatch.
public struct PostgresRow: Sendable {
    let columns: PostgresColumns
    /// Binary value of each column; `nil` is SQL NULL.
    let cells: [[UInt8]?]

    init(columns: PostgresColumns, cells: [[UInt8]?]) {
        self.columns = columns
        self.cells = cells
    }

    /// The number of columns.
    public var count: Int { cells.count }

    /// Column names in result order.
    public var columnNames: [String] { columns.names }

    /// Decodes column `index` (0-based) as `type`.
    public func decode<Value: PostgresDecodable>(_ type: Value.Type = Value.self, column index: Int) throws -> Value {
        guard cells.indices.contains(index) else {
            throw PostgresError(code: .columnNotFound, message: "no column at index \(index) (row has \(count))")
        }
        let name = columns.names[index]
        guard let bytes = cells[index] else {
            if let null = Value.postgresNull { return null }
            throw PostgresError(
                code: .unexpectedNull, message: "column is NULL but \(Value.self) is not optional", column: name)
        }
        do {
            return try Value(postgresBinary: bytes, type: columns.types[index])
        } catch var error as PostgresError {
            error.column = name
            throw error
        }
    }

    /// Decodes the first column called `name` (as the server spelled it, usually lower case).
    public func decode<Value: PostgresDecodable>(_ type: Value.Type = Value.self, column name: String) throws -> Value {
        guard let index = columns.indexByName[name] else {
            throw PostgresError(code: .columnNotFound, message: "no column named \(name)")
        }
        return try decode(type, column: index)
    }

    /// Decodes all columns at once, in order: `let (id, name) = try row.decode(UUID.self, String.self)`.
    /// Throws `.columnNotFound` unless the row has exactly as many columns as types given.
    public func decode<each Value: PostgresDecodable>(_ types: repeat (each Value).Type) throws -> (repeat each Value) {
        var expected = 0
        for _ in repeat each types { expected += 1 }
        guard expected == count else {
            throw PostgresError(code: .columnNotFound, message: "decoding \(expected) columns from a row of \(count)")
        }
        var index = 0
        func next<V: PostgresDecodable>(_ type: V.Type) throws -> V {
            defer { index += 1 }
            return try decode(type, column: index)
        }
        return (repeat try next(each types))
    }
}

/// Column names and types shared by all rows of one result.
final class PostgresColumns: Sendable {
    let names: [String]
    let types: [PostgresDataType]
    let indexByName: [String: Int]

    init(names: [String], types: [PostgresDataType]) {
        self.names = names
        self.types = types
        var indexByName: [String: Int] = [:]
        for (index, name) in names.enumerated() where indexByName[name] == nil {
            indexByName[name] = index
        }
        self.indexByName = indexByName
    }
}
