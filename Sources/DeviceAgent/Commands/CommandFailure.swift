import GRDB

/// Whether a failure to take in a `device_commands` message may pass by retrying.
///
/// Busy, locked, I/O, full-disk and open failures of the local SQLite store are transient;
/// anything else (a constraint, a value SQLite refuses, an error nobody expected) depends
/// on the message and would fail again: the message is quarantined (counted, logged, its
/// offset committed) so that the commands after it still arrive. A skipped genuine command
/// is not lost for good: self-healing brings the device to the grant service's version.
enum CommandFailure: Equatable, Sendable {
    case transient
    case content

    /// Attempts on one message before a transient failure counts as the message's own.
    static let retryBudget = 8

    static func classify(_ error: any Error) -> CommandFailure {
        if let error = error as? AgentError { return error.isTransient ? .transient : .content }
        guard let error = error as? DatabaseError else { return .content }
        switch error.resultCode.primaryResultCode {
        case .SQLITE_BUSY, .SQLITE_LOCKED, .SQLITE_IOERR, .SQLITE_FULL, .SQLITE_CANTOPEN, .SQLITE_PROTOCOL,
            .SQLITE_NOMEM, .SQLITE_INTERRUPT:
            return .transient
        default:
            return .content
        }
    }
}
