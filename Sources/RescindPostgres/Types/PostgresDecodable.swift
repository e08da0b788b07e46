/// A Swift value that can be read from a result column in binary format.
///
/// Decoding checks the column's type first, so reading an `int8` column as `String` fails with
/// `PostgresError.Code.typeMismatch` naming both types, not with garbage.
public protocol PostgresDecodable: Sendable {
    /// Decodes a non-NULL binary value of a column of type `type`.
    /// - Throws: `PostgresError` `.typeMismatch` or `.invalidValue` (use the static helpers).
    init(postgresBinary bytes: [UInt8], type: PostgresDataType) throws

    /// The value SQL NULL decodes to, or `nil` if NULL is an error for this type (the default).
    static var postgresNull: Self? { get }
}

extension PostgresDecodable {
    public static var postgresNull: Self? { nil }
}

extension Optional: PostgresDecodable where Wrapped: PostgresDecodable {
    public init(postgresBinary bytes: [UInt8], type: PostgresDataType) throws {
        self = try Wrapped(postgresBinary: bytes, type: type)
    }

    public static var postgresNull: Wrapped?? { .some(.none) }
}

extension PostgresDecodable where Self: RawRepresentable, RawValue: PostgresDecodable {
    public init(postgresBinary bytes: [UInt8], type: PostgresDataType) throws {
        let raw = try RawValue(postgresBinary: bytes, type: type)
        guard let value = Self(rawValue: raw) else {
            throw PostgresError.invalidValue(Self.self, type: type, reason: "not a known raw value")
        }
        self = value
    }
}

extension PostgresDataType {
    /// Throws `.typeMismatch` unless this type is one of `accepted`.
    func require(_ accepted: PostgresDataType..., for swiftType: Any.Type) throws {
        guard accepted.contains(self) else { throw PostgresError.typeMismatch(swiftType, actual: self) }
    }
}
