import Foundation

// text, bytea, uuid and timestamptz. The connection forces client_encoding UTF8, so the
// binary form of every textual type is plain UTF-8.

extension String: PostgresEncodable, PostgresDecodable {
    public static var postgresType: PostgresDataType { .text }

    public func encode(into buffer: inout [UInt8]) { buffer.append(contentsOf: utf8) }

    /// Reads text, varchar, bpchar and name columns.
    public init(postgresBinary bytes: [UInt8], type: PostgresDataType) throws {
        guard type.isTextual else { throw PostgresError.typeMismatch(Self.self, actual: type) }
        guard let string = String(validating: bytes, as: UTF8.self) else {
            throw PostgresError.invalidValue(Self.self, type: type, reason: "not valid UTF-8")
        }
        self = string
    }
}

/// `bytea` as a byte array. An empty array is an empty bytea, not NULL.
extension Array: PostgresEncodable, PostgresDecodable where Element == UInt8 {
    public static var postgresType: PostgresDataType { .bytea }

    public func encode(into buffer: inout [UInt8]) { buffer.append(contentsOf: self) }

    public init(postgresBinary bytes: [UInt8], type: PostgresDataType) throws {
        try type.require(.bytea, for: Self.self)
        self = bytes
    }
}

/// `bytea` as Foundation `Data`.
extension Data: PostgresEncodable, PostgresDecodable {
    public static var postgresType: PostgresDataType { .bytea }

    public func encode(into buffer: inout [UInt8]) { buffer.append(contentsOf: self) }

    public init(postgresBinary bytes: [UInt8], type: PostgresDataType) throws {
        try type.require(.bytea, for: Self.self)
        self = Data(bytes)
    }
}

extension UUID: PostgresEncodable, PostgresDecodable {
    public static var postgresType: PostgresDataType { .uuid }

    public func encode(into buffer: inout [UInt8]) {
        withUnsafeBytes(of: uuid) { buffer.append(contentsOf: $0) }
    }

    public init(postgresBinary bytes: [UInt8], type: PostgresDataType) throws {
        try type.require(.uuid, for: Self.self)
        guard bytes.count == 16 else {
            throw PostgresError.invalidValue(Self.self, type: type, reason: "expected 16 bytes, got \(bytes.count)")
        }
        var raw: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &raw) { $0.copyBytes(from: bytes) }
        self = UUID(uuid: raw)
    }
}

/// `timestamptz`: microseconds since 2000-01-01 00:00:00 UTC. Encoding rounds to the nearest
/// microsecond, PostgreSQL's resolution. `infinity`/`-infinity` decode to `distantFuture`/`distantPast`.
extension Date: PostgresEncodable, PostgresDecodable {
    public static var postgresType: PostgresDataType { .timestamptz }

    /// Microseconds from 2000-01-01 (PostgreSQL's epoch) to 2001-01-01 (Foundation's reference date).
    private static let postgresEpochOffsetMicroseconds: Int64 = 366 * 86_400 * 1_000_000

    public func encode(into buffer: inout [UInt8]) {
        let sinceReference = Int64((timeIntervalSinceReferenceDate * 1_000_000).rounded())
        buffer.appendBigEndian(sinceReference + Self.postgresEpochOffsetMicroseconds)
    }

    /// Reads timestamptz, and timestamp (without time zone) as if it were UTC.
    public init(postgresBinary bytes: [UInt8], type: PostgresDataType) throws {
        try type.require(.timestamptz, .timestamp, for: Self.self)
        guard let microseconds = bytes.bigEndianInteger(Int64.self) else {
            throw PostgresError.invalidValue(Self.self, type: type, reason: "expected 8 bytes, got \(bytes.count)")
        }
        switch microseconds {
        case .max: self = .distantFuture
        case .min: self = .distantPast
        default:
            let sinceReference = microseconds - Self.postgresEpochOffsetMicroseconds
            self = Date(timeIntervalSinceReferenceDate: Double(sinceReference) / 1_000_000)
        }
    }
}
