// Integers: int2/int4/int8 are big-endian two's complement. Decoding widens (an int2 column
// reads as Int32 or Int64) but never narrows.

extension Int16: PostgresEncodable, PostgresDecodable {
    public static var postgresType: PostgresDataType { .int2 }

    public func encode(into buffer: inout [UInt8]) { buffer.appendBigEndian(self) }

    public init(postgresBinary bytes: [UInt8], type: PostgresDataType) throws {
        try type.require(.int2, for: Self.self)
        self = try decodeInteger(bytes, type: type)
    }
}

extension Int32: PostgresEncodable, PostgresDecodable {
    public static var postgresType: PostgresDataType { .int4 }

    public func encode(into buffer: inout [UInt8]) { buffer.appendBigEndian(self) }

    public init(postgresBinary bytes: [UInt8], type: PostgresDataType) throws {
        switch type {
        case .int2: self = Int32(try decodeInteger(bytes, type: type) as Int16)
        case .int4: self = try decodeInteger(bytes, type: type)
        default: throw PostgresError.typeMismatch(Self.self, actual: type)
        }
    }
}

extension Int64: PostgresEncodable, PostgresDecodable {
    public static var postgresType: PostgresDataType { .int8 }

    public func encode(into buffer: inout [UInt8]) { buffer.appendBigEndian(self) }

    public init(postgresBinary bytes: [UInt8], type: PostgresDataType) throws {
        switch type {
        case .int2: self = Int64(try decodeInteger(bytes, type: type) as Int16)
        case .int4: self = Int64(try decodeInteger(bytes, type: type) as Int32)
        case .int8: self = try decodeInteger(bytes, type: type)
        default: throw PostgresError.typeMismatch(Self.self, actual: type)
        }
    }
}

/// `Int` is sent as `int8`; on 64-bit platforms (the only ones this runs on) it never truncates.
extension Int: PostgresEncodable, PostgresDecodable {
    public static var postgresType: PostgresDataType { .int8 }

    public func encode(into buffer: inout [UInt8]) { buffer.appendBigEndian(Int64(self)) }

    public init(postgresBinary bytes: [UInt8], type: PostgresDataType) throws {
        self = Int(try Int64(postgresBinary: bytes, type: type))
    }
}

extension Bool: PostgresEncodable, PostgresDecodable {
    public static var postgresType: PostgresDataType { .bool }

    public func encode(into buffer: inout [UInt8]) { buffer.append(self ? 1 : 0) }

    public init(postgresBinary bytes: [UInt8], type: PostgresDataType) throws {
        try type.require(.bool, for: Self.self)
        guard bytes.count == 1 else {
            throw PostgresError.invalidValue(Self.self, type: type, reason: "expected 1 byte, got \(bytes.count)")
        }
        self = bytes[0] != 0
    }
}

extension Double: PostgresEncodable, PostgresDecodable {
    public static var postgresType: PostgresDataType { .float8 }

    public func encode(into buffer: inout [UInt8]) { buffer.appendBigEndian(bitPattern) }

    public init(postgresBinary bytes: [UInt8], type: PostgresDataType) throws {
        switch type {
        case .float4: self = Double(Float(bitPattern: try decodeInteger(bytes, type: type)))
        case .float8: self = Double(bitPattern: try decodeInteger(bytes, type: type))
        default: throw PostgresError.typeMismatch(Self.self, actual: type)
        }
    }
}

private func decodeInteger<T: FixedWidthInteger>(_ bytes: [UInt8], type: PostgresDataType) throws -> T {
    guard let value = bytes.bigEndianInteger(T.self) else {
        throw PostgresError.invalidValue(
            T.self, type: type, reason: "expected \(MemoryLayout<T>.size) bytes, got \(bytes.count)")
    }
    return value
}
