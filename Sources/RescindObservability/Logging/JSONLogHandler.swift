import Foundation
import Logging

/// A swift-log handler that writes each entry as one JSON object on one line of standard
/// error: `{"timestamp":…,"level":…,"label":…,"message":…,"metadata":{…}}`.
///
/// The timestamp is RFC 3339 in UTC with milliseconds; metadata values keep their shape
/// (strings, arrays, objects); a newline inside a message is escaped, so a line is always
/// one entry. Each line goes out in one `write`, under a lock shared by every handler, so
/// lines of concurrent loggers never interleave.
public struct JSONLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let label: String

    public init(label: String, metadataProvider: Logger.MetadataProvider? = LoggingSystem.metadataProvider) {
        self.label = label
        self.metadataProvider = metadataProvider
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(
        level: Logger.Level, message: Logger.Message, metadata explicit: Logger.Metadata?, source: String,
        file: String, function: String, line: UInt
    ) {
        var merged = self.metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let explicit { merged.merge(explicit) { _, new in new } }
        var text = "{\"timestamp\":"
        Self.appendString(Self.timestamp(), to: &text)
        text += ",\"level\":"
        Self.appendString(level.rawValue, to: &text)
        text += ",\"label\":"
        Self.appendString(label, to: &text)
        text += ",\"message\":"
        Self.appendString(message.description, to: &text)
        text += ",\"metadata\":"
        Self.append(.dictionary(merged), to: &text)
        text += "}\n"
        Self.output.write(text)
    }

    /// Standard error, written whole under a lock.
    private static let output = LineWriter()

    /// Now, as `2026-11-29T09:34:25.123Z`.
    static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
            Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), Int(now.tv_nsec / 1_000_000))
    }

    private static func append(_ value: Logger.Metadata.Value, to text: inout String) {
        switch value {
        case .string(let string):
            appendString(string, to: &text)
        case .stringConvertible(let convertible):
            appendString(convertible.description, to: &text)
        case .array(let values):
            text += "["
            for (index, element) in values.enumerated() {
                if index > 0 { text += "," }
                append(element, to: &text)
            }
            text += "]"
        case .dictionary(let entries):
            text += "{"
            for (index, key) in entries.keys.sorted().enumerated() {
                if index > 0 { text += "," }
                appendString(key, to: &text)
                text += ":"
                append(entries[key]!, to: &text)
            }
            text += "}"
        }
    }

    /// A JSON string literal (RFC 8259): quotes, backslashes and control characters escaped.
    static func appendString(_ string: String, to text: inout String) {
        text += "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case _ where scalar.value < 0x20:
                text += "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                    + String(scalar.value, radix: 16)
            default: text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }
}

/// Writes whole lines to standard error, one at a time.
private final class LineWriter: @unchecked Sendable {
    // Safe: every write happens under `lock`; the file handle itself is never mutated.
    private let lock = NSLock()

    func write(_ line: String) {
        let data = Data(line.utf8)
        lock.lock()
        defer { lock.unlock() }
        FileHandle.standardError.write(data)
    }
}
