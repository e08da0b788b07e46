import Foundation

/// The one place that says how large or small any field of a topic message may be.
///
/// Consumers check every decoded field against these limits before it reaches SQL or
/// disk (`BoundaryValidated`), producers keep within them, and the JSON Schemas in
/// `schemas/` state the same numbers (`SchemaLimitsTests` checks that they agree).
/// String lengths count Unicode scalars, as JSON Schema's `maxLength` counts code points.
public enum MessageLimits {
    /// Counts and versions are stored in PostgreSQL `integer` columns.
    public static let maxInteger = Int(Int32.max)
    /// A revocation's free-text reason (the grant service refuses longer ones at its API).
    public static let reasonLength = 500
    /// A device's failure text in an ack.
    public static let errorLength = 500
    /// An envelope's `signer` (`grant-service`, `audit-service`, `device:<uuid>`).
    public static let signerLength = 64
    /// Devices one revocation may expect to act.
    public static let expectedDevices = 5_000
    /// Entries in an access event's `details`, and the length of each key and value.
    public static let detailEntries = 32
    public static let detailKeyLength = 64
    public static let detailValueLength = 500
    /// Timestamps outside this range are refused (2000-01-01 … 2200-01-01 UTC).
    public static let earliestTimestamp = Date(timeIntervalSince1970: 946_684_800)
    public static let latestTimestamp = Date(timeIntervalSince1970: 7_258_118_400)

    /// Whether `text` is at most `maxLength` scalars and free of control characters
    /// (U+0000–U+001F, U+007F): PostgreSQL refuses NUL in `text`, and no field needs the rest.
    /// Swift strings cannot hold invalid UTF-8 or lone surrogates; the decoder refuses or
    /// replaces those before a string exists.
    public static func isSafeText(_ text: String, maxLength: Int) -> Bool {
        var count = 0
        for scalar in text.unicodeScalars {
            count += 1
            if count > maxLength || scalar.value < 0x20 || scalar.value == 0x7f { return false }
        }
        return true
    }

    /// `text` cut to at most `maxLength` scalars with control characters replaced by U+FFFD:
    /// for producers that must stay within a limit rather than fail (an agent's error text).
    public static func safeText(_ text: String, maxLength: Int) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in text.unicodeScalars.prefix(maxLength) {
            scalars.append(scalar.value < 0x20 || scalar.value == 0x7f ? "\u{FFFD}" : scalar)
        }
        return String(scalars)
    }

    /// Untrusted text made printable for storage or logs: control characters escaped as
    /// `\u{XX}`, cut to `maxLength` scalars. Never fails.
    public static func escaped(_ text: String, maxLength: Int) -> String {
        var result = ""
        for scalar in text.unicodeScalars.prefix(maxLength) {
            if scalar.value < 0x20 || scalar.value == 0x7f || scalar == "\\" {
                result += "\\u{\(String(scalar.value, radix: 16))}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    public static func isSafeTimestamp(_ date: Date) -> Bool {
        date >= earliestTimestamp && date < latestTimestamp
    }
}

/// A payload whose every field is checked against `MessageLimits` when it is decoded
/// (`SignedMessage.decode` calls `validate()`).
public protocol BoundaryValidated {
    /// - Throws: `MessageError.invalidField` naming the first field out of its limits.
    func validate() throws(MessageError)
}

/// Small checks for `validate()` implementations: each throws `invalidField(name)`.
public struct FieldCheck {
    @usableFromInline let prefix: String

    public init(_ prefix: String = "") { self.prefix = prefix }

    public func integer(_ value: Int, _ name: String, in range: ClosedRange<Int>) throws(MessageError) {
        guard range.contains(value) else { throw .invalidField(prefix + name) }
    }

    public func text(_ value: String?, _ name: String, maxLength: Int) throws(MessageError) {
        guard let value else { return }
        guard MessageLimits.isSafeText(value, maxLength: maxLength) else { throw .invalidField(prefix + name) }
    }

    public func timestamp(_ value: Date?, _ name: String) throws(MessageError) {
        guard let value else { return }
        guard MessageLimits.isSafeTimestamp(value) else { throw .invalidField(prefix + name) }
    }

    public func bytes(_ value: Data, _ name: String, count: Int) throws(MessageError) {
        guard value.count == count else { throw .invalidField(prefix + name) }
    }
}
