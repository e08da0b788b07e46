import CLibPQ

/// Owns one `PGresult`; everything read from it is copied into Swift values before `PQclear`.
final class LibPQResult {
    private let result: OpaquePointer

    init(_ result: OpaquePointer) {
        self.result = result
    }

    deinit {
        PQclear(result)
    }

    var status: ExecStatusType { PQresultStatus(result) }

    /// Rows affected by INSERT/UPDATE/DELETE/MERGE/SELECT/COPY…; 0 for other commands.
    var affectedRows: Int {
        guard let tuples = PQcmdTuples(result) else { return 0 }
        return Int(String(cString: tuples)) ?? 0
    }

    /// The command tag, e.g. `COMMIT`, or `ROLLBACK` when COMMIT ended a failed transaction.
    var commandTag: String {
        guard let tag = PQcmdStatus(result) else { return "" }
        return String(cString: tag)
    }

    var columns: PostgresColumns {
        let count = PQnfields(result)
        var names: [String] = []
        var types: [PostgresDataType] = []
        for column in 0..<count {
            names.append(PQfname(result, column).map { String(cString: $0) } ?? "")
            types.append(PostgresDataType(oid: PQftype(result, column)))
        }
        return PostgresColumns(names: names, types: types)
    }

    /// Copies every row out of the result.
    func rows() -> [PostgresRow] {
        let columns = self.columns
        let rowCount = PQntuples(result)
        let columnCount = Int32(columns.names.count)
        var rows: [PostgresRow] = []
        rows.reserveCapacity(Int(rowCount))
        for row in 0..<rowCount {
            var cells: [[UInt8]?] = []
            cells.reserveCapacity(Int(columnCount))
            for column in 0..<columnCount {
                if PQgetisnull(result, row, column) != 0 {
                    cells.append(nil)
                    continue
                }
                let length = Int(PQgetlength(result, row, column))
                guard length > 0, let value = PQgetvalue(result, row, column) else {
                    cells.append([])
                    continue
                }
                cells.append(Array(UnsafeRawBufferPointer(start: value, count: length)))
            }
            rows.append(PostgresRow(columns: columns, cells: cells))
        }
        return rows
    }

    /// The error this result reports. Only the primary message and object names are kept;
    /// DETAIL and HINT (which may echo row values) are dropped.
    func error(connectionLost: Bool, connectionMessage: String) -> PostgresError {
        let sqlState = field(PG_DIAG_SQLSTATE)
        let primary = field(PG_DIAG_MESSAGE_PRIMARY)
        let message = primary.map { PostgresError.redactingValues(in: $0, sqlState: sqlState) }
            ?? LibPQConnection.firstLines(of: PQresultErrorMessage(result)) ?? connectionMessage
        return PostgresError(
            code: connectionLost ? .connectionLost : .server,
            message: message,
            sqlState: sqlState,
            constraint: field(PG_DIAG_CONSTRAINT_NAME),
            table: field(PG_DIAG_TABLE_NAME),
            column: field(PG_DIAG_COLUMN_NAME)
        )
    }

    /// Severity, SQLSTATE and primary message of a notice; `notice` stays owned by libpq.
    static func noticeSummary(_ notice: OpaquePointer) -> (severity: String, sqlState: String, message: String) {
        let sqlState = field(PG_DIAG_SQLSTATE, of: notice)
        let message = field(PG_DIAG_MESSAGE_PRIMARY, of: notice) ?? ""
        return (
            field(PG_DIAG_SEVERITY_NONLOCALIZED, of: notice) ?? "NOTICE",
            sqlState ?? "",
            PostgresError.redactingValues(in: message, sqlState: sqlState)
        )
    }

    private func field(_ code: Character) -> String? {
        Self.field(code, of: result)
    }

    private static func field(_ code: Character, of result: OpaquePointer) -> String? {
        PQresultErrorField(result, Int32(code.asciiValue ?? 0)).map { String(cString: $0) }
    }
}

// libpq's PG_DIAG_* field codes are character macros, which Swift does not import.
private let PG_DIAG_SEVERITY_NONLOCALIZED: Character = "V"
private let PG_DIAG_SQLSTATE: Character = "C"
private let PG_DIAG_MESSAGE_PRIMARY: Character = "M"
private let PG_DIAG_TABLE_NAME: Character = "t"
private let PG_DIAG_COLUMN_NAME: Character = "c"
private let PG_DIAG_CONSTRAINT_NAME: Character = "n"
