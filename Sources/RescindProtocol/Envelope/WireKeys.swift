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
    /// Words written in capitals in Swift names, by their wire spelling.
    static let acronyms: [Substring: String] = ["id": "ID", "ids": "IDs", "fmk": "FMK"]

    /// The wire spelling of `name`: a word starts at a capital after a lower-case letter or a
    /// digit, and at the last capital of a run that a lower-case letter follows (`FMKVersion`),
    /// except a plural `s` ending the run's word (`IDs`).
    public static func snake(_ name: String) -> String {
        let characters = Array(name)
        var key = ""
        key.reserveCapacity(characters.count + 4)
        for (index, character) in characters.enumerated() {
            if character.isUppercase, index > 0 {
                let previous = characters[index - 1]
                let next = index + 1 < characters.count ? characters[index + 1] : nil
                let afterWord = previous.isLowercase || previous.isNumber
                let endsRun = previous.isUppercase && (next?.isLowercase ?? false) && !isPluralS(at: index + 1, in: characters)
                if afterWord || endsRun { key.append("_") }
            }
            key.append(contentsOf: character.lowercased())
        }
        return key
    }

    /// The property name that `key` is the wire spelling of, or nil if `snake` never writes `key`.
    public static func camel(_ key: String) -> String? {
        guard key.utf8.allSatisfy({ ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x5F }) else { return nil }
        let words = key.split(separator: "_", omittingEmptySubsequences: false)
        guard let first = words.first, !words.contains(where: \.isEmpty) else { return nil }
        var name = String(first)
        for word in words.dropFirst() {
            name += acronyms[word] ?? word.prefix(1).uppercased() + word.dropFirst()
        }
        return snake(name) == key ? name : nil
    }

    /// Whether `characters[index]` is an `s` that ends its word (`IDs`, `IDsValid`).
    private static func isPluralS(at index: Int, in characters: [Character]) -> Bool {
        guard index < characters.count, characters[index] == "s" else { return false }
        return index + 1 == characters.count || !characters[index + 1].isLowercase
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
