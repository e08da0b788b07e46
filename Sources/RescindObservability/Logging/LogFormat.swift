/// How every Rescind executable writes its log lines (`RESCIND_LOG_FORMAT`).
public enum LogFormat: String, Sendable, CaseIterable {
    /// swift-log's `StreamLogHandler` line: `<timestamp> <level> <label> : <metadata> [<source>] <message>`.
    case text
    /// One JSON object per line (`JSONLogHandler`), for log collectors that parse fields.
    case json

    /// The variable that chooses the format.
    public static let variable = "RESCIND_LOG_FORMAT"

    /// Reads `RESCIND_LOG_FORMAT`: unset or empty means `text`.
    /// - Throws: `LogFormatError` for any other value than `text` or `json`, so that a typo
    ///   stops the process at start instead of silently logging in the other format.
    public init(environment: [String: String]) throws {
        let value = environment[Self.variable] ?? ""
        if value.isEmpty {
            self = .text
        } else if let format = LogFormat(rawValue: value) {
            self = format
        } else {
            throw LogFormatError()
        }
    }
}

/// `RESCIND_LOG_FORMAT` holds something else than `text` or `json` (the value is not repeated).
public struct LogFormatError: Error, CustomStringConvertible {
    public var description: String { "\(LogFormat.variable) must be text or json" }
}
