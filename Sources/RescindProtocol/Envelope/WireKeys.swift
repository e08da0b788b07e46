import Synchronization

/// How a Swift property name is spelled as a JSON field, and back: one rule for every type
/// Rescind codes with `CanonicalJSON`, so no type writes out a key list of its own.
///
/// The wire is snake case; Swift is camel case with ``acronyms`` written in capitals:
/// `familyMemberID` ↔ `family_member_id`, `fromFMKVersion` ↔ `from_fmk_version`,
/// `recordIDs` ↔ `record_ids`, `x25519PublicKey` ↔ `x25519_public_key`.
///
/// Decoding accepts only the spelling encoding produces. A key in camel case (`familyMemberID`),
/// with a doubled, leading or trailing underscore, or anything else `snake` cannot have written
/// names no property, so a field has exactly one spelling on the wire and a reader never has to
/// choose between two. A property whose name holds an acronym missing from the table fails to
/// decode in every round-trip test, which is how the table stays complete.
public enum WireKeys {
    private static let snakeCache = Mutex<[String: String]>([:])
    private static let camelCache = Mutex<[String: String]>([:])
    /// Every property of every wire type, several times over; beyond it, converted each time.
    static let cacheLimit = 4_096
    /// How many conversions each cache holds.
    static var cached: (snake: Int, camel: Int) { (snakeCache.withLock(\.count), camelCache.withLock(\.count)) }

    /// Words written in capitals in Swift names, by their wire spelling.
    static let acronyms: [Substring: String] = ["id": "ID", "ids": "IDs", "fmk": "FMK"]

    /// The wire spelling of `name`: a word starts at a capital after a lower-case letter or a
    /// digit, and at the last capital of a run that a lower-case letter follows (`FMKVersion`),
    /// except a plural `s` ending the run's word (`IDs`).
    /// Converted once per name and remembered: the coders ask for every key of every value.
    public static func snake(_ name: String) -> String {
        if let known = snakeCache.withLock({ $0[name] }) { return known }
        let key = convertToSnake(name)
        snakeCache.withLock { if $0.count < cacheLimit { $0[name] = key } }
        return key
    }

    static func convertToSnake(_ name: String) -> String {
        let bytes = Array(name.utf8)
        func isUpper(_ i: Int) -> Bool { i < bytes.count && bytes[i] >= 0x41 && bytes[i] <= 0x5A }
        func isLower(_ i: Int) -> Bool { i < bytes.count && bytes[i] >= 0x61 && bytes[i] <= 0x7A }
        func isDigit(_ i: Int) -> Bool { i < bytes.count && bytes[i] >= 0x30 && bytes[i] <= 0x39 }
        var key: [UInt8] = []
        key.reserveCapacity(bytes.count + 4)
        for index in bytes.indices {
            if isUpper(index), index > 0 {
                let afterWord = isLower(index - 1) || isDigit(index - 1)
                let pluralS = index + 1 < bytes.count && bytes[index + 1] == 0x73 && !isLower(index + 2)
                let endsRun = isUpper(index - 1) && isLower(index + 1) && !pluralS
                if afterWord || endsRun { key.append(0x5F) }
                key.append(bytes[index] + 0x20)
            } else {
                key.append(isUpper(index) ? bytes[index] + 0x20 : bytes[index])
            }
        }
        return String(decoding: key, as: UTF8.self)
    }

    /// The property name that `key` is the wire spelling of, or nil if `snake` never writes `key`.
    public static func camel(_ key: String) -> String? {
        if let known = camelCache.withLock({ $0[key] }) { return known }
        let name = convertToCamel(key)
        // Bounded: the keys of a received object are the sender's choice.
        if let name { camelCache.withLock { if $0.count < cacheLimit { $0[key] = name } } }
        return name
    }

    static func convertToCamel(_ key: String) -> String? {
        guard key.utf8.allSatisfy({ ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x5F }) else { return nil }
        let words = key.split(separator: "_", omittingEmptySubsequences: false)
        guard let first = words.first, !words.contains(where: \.isEmpty) else { return nil }
        var name = String(first)
        for word in words.dropFirst() {
            name += acronyms[word] ?? word.prefix(1).uppercased() + word.dropFirst()
        }
        return convertToSnake(name) == key ? name : nil
    }
}

extension WireKeys {
    /// A coding key by its text: what the key strategies hand back to the coders.
    public struct Key: CodingKey {
        public let stringValue: String
        public let intValue: Int?

        public init(stringValue: String) {
            self.stringValue = stringValue
            self.intValue = nil
        }

        public init(intValue: Int) {
            self.stringValue = String(intValue)
            self.intValue = intValue
        }
    }

    /// For `JSONEncoder.keyEncodingStrategy`: array indices stay as they are.
    @Sendable static func encodingKey(_ path: [any CodingKey]) -> any CodingKey {
        guard let last = path.last else { return Key(stringValue: "") }
        return last.intValue != nil ? last : Key(stringValue: snake(last.stringValue))
    }

    /// For `JSONDecoder.keyDecodingStrategy`: a key `snake` never writes becomes one that no
    /// property is named (it starts with a space), so it is read as an unknown field. A number
    /// stays as it is (the key of an `Int`-keyed dictionary).
    @Sendable static func decodingKey(_ path: [any CodingKey]) -> any CodingKey {
        guard let last = path.last else { return Key(stringValue: " ") }
        if last.intValue != nil || Int(last.stringValue) != nil { return last }
        return Key(stringValue: camel(last.stringValue) ?? " " + last.stringValue)
    }
}
