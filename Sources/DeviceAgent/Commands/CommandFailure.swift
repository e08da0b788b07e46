import GRDB
import RescindClient

/// Whether a failure to take in a `device_commands` message may pass by retrying.
///
/// Busy, locked, I/O, full-disk and open failures of the local SQLite store are transient
/// (`AgentError.Code.storageBusy`, as `AgentStore` reports them);
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
        switch error {
        case let error as AgentError: error.isTransient || error.code == .storageBusy ? .transient : .content
        case is DatabaseError: AgentStore.code(of: error) == .storageBusy ? .transient : .content
        default: .content
        }
    }
}
