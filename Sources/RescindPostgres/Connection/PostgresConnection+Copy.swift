extension PostgresConnection {
    /// Bulk-inserts rows with `COPY table (columns) FROM STDIN (FORMAT binary)`, the fastest
    /// way to load many rows. `writeRows` appends them; they stream to the server in ~256 KiB
    /// chunks while it runs. Inside `transaction` the rows commit with it.
    ///
    /// If `writeRows` throws, the COPY is aborted (no row is inserted) and the error rethrown.
    /// - Parameters:
    ///   - schema: the table's schema; `nil` follows `search_path`.
    /// - Returns: the number of rows inserted.
    /// - Throws: `.invalidCopyRow` for a row that does not fit `columns`, `.server` when the
    ///   server rejects the data (constraint violation, …), or what `writeRows` throws.
    @discardableResult
    public func copyFrom(
        table: String,
        schema: String? = nil,
        columns: [String],
        _ writeRows: (PostgresCopyWriter) throws -> Void
    ) throws -> Int {
        let target = (schema.map { quoteIdentifier($0) + "." } ?? "") + quoteIdentifier(table)
        let columnList = columns.map(quoteIdentifier).joined(separator: ", ")
        // The target's column types, so a wrongly typed value fails before sending, naming the
        // column, rather than as the server's "incorrect binary data format".
        let types = try handle.execute(PostgresQuery(unsafeSQL: "SELECT \(columnList) FROM \(target) WHERE false"))
            .columns.types
        try handle.beginCopy("COPY \(target) (\(columnList)) FROM STDIN (FORMAT binary)")
        let writer = PostgresCopyWriter(connection: handle, columnNames: columns, columnTypes: types)
        do {
            try writeRows(writer)
            try writer.finish()
        } catch {
            writer.invalidate()
            _ = try? handle.endCopy(failure: "COPY aborted by the client")
            throw error
        }
        return try handle.endCopy(failure: nil)
    }
}
