/// A SQL statement with its parameters, built safely by string interpolation:
///
///     let query: PostgresQuery = "SELECT name FROM users WHERE id = \(userID) AND active = \(true)"
///
/// Each interpolated value becomes a `$n` placeholder bound in binary format; values are never
/// spliced into the SQL text. Use `\(identifier:)` for schema/table/column names (quoted) and
/// `\(unescaped:)` only for trusted SQL fragments.
public struct PostgresQuery: Sendable, ExpressibleByStringInterpolation, CustomStringConvertible {
    /// The SQL text, with `$1`, `$2`, … placeholders.
    public var sql: String
    public var bindings: PostgresBindings

    /// A query from SQL that already has `$n` placeholders, and their values in order.
    ///
    /// The SQL is used as is: never build `sql` from untrusted input; prefer interpolation.
    public init(unsafeSQL sql: String, _ parameters: any PostgresEncodable...) {
        self.sql = sql
        self.bindings = PostgresBindings()
        for parameter in parameters { bindings.append(parameter) }
    }

    public init(unsafeSQL sql: String, bindings: PostgresBindings) {
        self.sql = sql
        self.bindings = bindings
    }

    public init(stringLiteral value: String) {
        self.init(unsafeSQL: value, bindings: PostgresBindings())
    }

    public init(stringInterpolation: StringInterpolation) {
        self.init(unsafeSQL: stringInterpolation.sql, bindings: stringInterpolation.bindings)
    }

    /// The SQL and the parameter types; parameter values are never shown.
    public var description: String { "\(sql) \(bindings)" }

    public struct StringInterpolation: StringInterpolationProtocol {
        var sql = ""
        var bindings = PostgresBindings()

        public init(literalCapacity: Int, interpolationCount: Int) {
            sql.reserveCapacity(literalCapacity + 3 * interpolationCount)
        }

        public mutating func appendLiteral(_ literal: String) {
            sql += literal
        }

        /// Binds `value` as the next `$n` parameter (NULL for `nil`).
        public mutating func appendInterpolation<Value: PostgresEncodable>(_ value: Value) {
            bindings.append(value)
            sql += "$\(bindings.count)"
        }

        /// Binds an optional as the next `$n` parameter: NULL for `nil`. (Spelled out so the
        /// compiler does not mistake it for printing an optional into a string.)
        public mutating func appendInterpolation<Value: PostgresEncodable>(_ value: Value?) {
            bindings.append(value)
            sql += "$\(bindings.count)"
        }

        /// Inserts a double-quoted identifier (schema, table, column, channel), case preserved.
        public mutating func appendInterpolation(identifier: String) {
            sql += quoteIdentifier(identifier)
        }

        /// Inserts trusted SQL text verbatim. Never pass user input.
        public mutating func appendInterpolation(unescaped: String) {
            sql += unescaped
        }
    }
}

/// Quotes an SQL identifier: wraps it in double quotes and doubles embedded ones.
func quoteIdentifier(_ name: String) -> String {
    var quoted = "\""
    for character in name {
        quoted += character == "\"" ? "\"\"" : String(character)
    }
    return quoted + "\""
}
