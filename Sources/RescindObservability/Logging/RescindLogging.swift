import Logging

/// The one place where a Rescind executable chooses how its logs look: at `level`, on standard
/// error, as text or JSON lines (`RESCIND_LOG_FORMAT`).
public enum RescindLogging {
    /// Bootstraps swift-log once, before the first `Logger` is made.
    /// - Parameter level: a swift-log level name (`debug`, …); anything else means `info`.
    /// - Throws: `LogFormatError` when `RESCIND_LOG_FORMAT` is neither `text` nor `json`.
    public static func bootstrap(level: String, environment: [String: String]) throws {
        let level = Logger.Level(rawValue: level) ?? .info
        switch try LogFormat(environment: environment) {
        case .text:
            LoggingSystem.bootstrap { label in
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = level
                return handler
            }
        case .json:
            LoggingSystem.bootstrap { label in
                var handler = JSONLogHandler(label: label)
                handler.logLevel = level
                return handler
            }
        }
    }
}
