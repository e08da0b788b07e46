import Logging
import RescindObservability

/// Receives the server's NOTICE/WARNING messages for one connection (libpq would otherwise
/// print them to stderr) and logs severity, SQLSTATE and primary message only.
final class NoticeLogger {
    private let logger: Logger
    /// The server announced it is closing the session (e.g. `pg_terminate_backend`, shutdown):
    /// such a FATAL message arrives as a notice when no statement is running.
    private(set) var receivedFatal = false

    init(logger: Logger) {
        self.logger = logger
    }

    /// Called by libpq on the thread running the connection's current call.
    func log(_ notice: OpaquePointer) {
        let summary = LibPQResult.noticeSummary(notice)
        if summary.severity == "FATAL" || summary.severity == "PANIC" { receivedFatal = true }
        let level: Logger.Level =
            switch summary.severity {
            case "WARNING": .warning
            case "FATAL", "PANIC": .notice
            default: .debug
            }
        logger.log(
            level: level, "postgres \(summary.severity.lowercased()): \(summary.message)",
            metadata: [LogKey.sqlState: "\(summary.sqlState)"])
    }
}
