import Foundation

/// A JSON document stored as `jsonb`, kept as its raw UTF-8 bytes.
///
/// The bytes are passed through untouched; PostgreSQL validates them on insert (invalid JSON
/// fails with SQLSTATE 22P02). Reads `json` columns too.
public struct PostgresJSON: Hashable, Sendable, PostgresEncodable, PostgresDecodable {
    /// The JSON text, UTF-8 encoded.
    public var bytes: [UInt8]

    public init(bytes: [UInt8]) { self.bytes = bytes }

    /// Encodes `value` with `encoder` (a fresh `JSONEncoder` by default).
    public init<Value: Encodable>(encoding value: Value, encoder: JSONEncoder = JSONEncoder()) throws {
        bytes = Array(try encoder.encode(value))
    }

    /// Decodes the document as `type`; throws the decoder's `DecodingError` on a shape mismatch.
    public func decode<Value: Decodable>(
        _ type: Value.Type = Value.self, decoder: JSONDecoder = JSONDecoder()
    ) throws -> Value {
        try decoder.decode(type, from: Data(bytes))
    }

    /// jsonb's binary format: a version byte, then the JSON text.
    private static let jsonbVersion: UInt8 = 1

    public static var postgresType: PostgresDataType { .jsonb }

    public func encode(into buffer: inout [UInt8]) {
        buffer.append(Self.jsonbVersion)
        buffer.append(contentsOf: bytes)
    }

    public init(postgresBinary bytes: [UInt8], type: PostgresDataType) throws {
        switch type {
        case .json:
            self.bytes = bytes
        case .jsonb:
            guard bytes.first == Self.jsonbVersion else {
                throw PostgresError.invalidValue(Self.self, type: type, reason: "unsupported jsonb format version")
            }
            self.bytes = Array(bytes.dropFirst())
        default:
            throw PostgresError.typeMismatch(Self.self, actual: type)
        }
    }
}
