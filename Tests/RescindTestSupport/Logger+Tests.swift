import Foundation
import Logging

extension Logger {
    /// A logger for test code and the services tests run: `warning` and above unless
    /// `RESCIND_TEST_LOG_LEVEL` asks for more (or less) while investigating a failure.
    public static func forTests(_ label: String) -> Logger {
        var logger = Logger(label: label)
        logger.logLevel = ProcessInfo.processInfo.environment["RESCIND_TEST_LOG_LEVEL"].flatMap { Logger.Level(rawValue: $0) } ?? .warning
        return logger
    }
}
