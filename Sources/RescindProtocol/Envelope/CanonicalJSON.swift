import Foundation

/// The one JSON form Rescind signs and sends: field names in snake case (`WireKeys`), sorted
/// keys, no insignificant whitespace, timestamps as RFC 3339 UTC with milliseconds, bytes as
/// base64.
///
/// Signatures cover this encoding of the *typed* payload, so a verifier that
/// decodes and re-encodes gets the same bytes; any field it does not know
/// changes the bytes and fails verification (fail closed).
public enum CanonicalJSON {
    public static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.keyEncodingStrategy = .custom(WireKeys.encodingKey)
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(Timestamp.format(date))
        }
        encoder.dataEncodingStrategy = .base64
        return encoder
    }

    public static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .custom(WireKeys.decodingKey)
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = Timestamp.parse(text) else {
                throw DecodingError.dataCorruptedError(
                    in: container, debugDescription: "expected an RFC 3339 timestamp")
            }
            return date
        }
        decoder.dataDecodingStrategy = .base64
        return decoder
    }

    public static func encode<T: Encodable>(_ value: T) throws -> Data {
        try encoder().encode(value)
    }

    public static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        try decoder().decode(type, from: data)
    }
}

extension CanonicalJSON {
    /// Whether `received` (what `JSONSerialization` read from the wire) holds exactly what
    /// `value`'s canonical encoding holds: no field more or fewer, no other value. A typed decode
    /// drops what the type does not know, and a signature covers only what it knows; this is
    /// how a reader refuses the difference.
    public static func holdsExactly<T: Encodable>(_ received: Any, _ value: T) -> Bool {
        guard let data = try? encode(value),
            let known = try? JSONSerialization.jsonObject(with: data, options: .fragmentsAllowed)
        else { return false }
        return sameJSON(received, known)
    }

    /// Whether `received` (a `JSONSerialization` tree) names no field that `value`'s encoding
    /// lacks, at any depth: for unsigned input, where the values were already checked by
    /// decoding `value` from it and only what rides along unread is left to refuse.
    public static func namesOnlyKnownFields<T: Encodable>(_ received: Any, _ value: T) -> Bool {
        guard let data = try? encode(value),
            let known = try? JSONSerialization.jsonObject(with: data, options: .fragmentsAllowed)
        else { return false }
        return namesOnly(received, known)
    }

    static func namesOnly(_ received: Any, _ known: Any) -> Bool {
        switch (received, known) {
        case let (received as [String: Any], known as [String: Any]):
            return received.allSatisfy { key, value in known[key].map { namesOnly(value, $0) } ?? false }
        case let (received as [Any], known as [Any]):
            return received.count == known.count && zip(received, known).allSatisfy { namesOnly($0, $1) }
        default:
            return true
        }
    }

    /// Structural equality of two `JSONSerialization` trees. Strings compare by their UTF-8
    /// bytes (not Unicode equivalence); numbers as `NSNumber` does. Written out rather than
    /// `NSDictionary.isEqual`, whose bridging of nested arrays is missing from executables
    /// linked with `--static-swift-stdlib` on Linux: there every payload with an array
    /// compared unequal to itself.
    static func sameJSON(_ lhs: Any, _ rhs: Any) -> Bool {
        switch (lhs, rhs) {
        case let (lhs as [String: Any], rhs as [String: Any]):
            return lhs.count == rhs.count
                && lhs.allSatisfy { key, value in rhs[key].map { sameJSON(value, $0) } ?? false }
        case let (lhs as [Any], rhs as [Any]):
            return lhs.count == rhs.count && zip(lhs, rhs).allSatisfy { sameJSON($0, $1) }
        case let (lhs as String, rhs as String):
            return lhs.utf8.elementsEqual(rhs.utf8)
        case let (lhs as NSNumber, rhs as NSNumber):
            return lhs.isEqual(to: rhs)
        case (is NSNull, is NSNull):
            return true
        default:
            return false
        }
    }
}
