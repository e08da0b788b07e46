/// A Swift value that can be sent to PostgreSQL as a parameter or COPY field, in binary format.
///
/// Conform your own types by delegating to a built-in one; `RawRepresentable` types whose
/// raw value is encodable get the conformance for free.
public protocol PostgresEncodable: Sendable {
    /// The SQL type of the binary encoding; it is sent as the parameter's type OID, so the
    /// server converts to the column's type only where PostgreSQL has an implicit cast.
    static var postgresType: PostgresDataType { get }

    /// Whether this value is SQL NULL (only `Optional.none` is).
    var isPostgresNull: Bool { get }

    /// Appends the binary wire form (PostgreSQL's `typsend` format, without a length prefix).
    /// Not called for NULL.
    func encode(into buffer: inout [UInt8])
}

extension PostgresEncodable {
    public var isPostgresNull: Bool { false }
}

extension Optional: PostgresEncodable where Wrapped: PostgresEncodable {
    public static var postgresType: PostgresDataType { Wrapped.postgresType }

    public var isPostgresNull: Bool { self == nil }

    public func encode(into buffer: inout [UInt8]) {
        self?.encode(into: &buffer)
    }
}

extension PostgresEncodable where Self: RawRepresentable, RawValue: PostgresEncodable {
    public static var postgresType: PostgresDataType { RawValue.postgresType }

    public func encode(into buffer: inout [UInt8]) {
        rawValue.encode(into: &buffer)
    }
}
