import RescindProtocol

/// The named steps of the agent's rotation and erasure state machines, in order, where the
/// dev kit can freeze the process (`AgentFaults.atStep`) so that a test kills it exactly
/// there. A rotation passes every step but `afterEraseCommitBeforeScrub`; an erasure every one
/// but `downloaded`.
package enum AgentStep: String, CaseIterable, Sendable {
    /// The command is stored in the inbox; its Kafka offset is not committed yet.
    case stored
    /// A rotation's new FMK and records are fetched and verified (a family member longer than
    /// one page staged in the incoming table); nothing is swapped in yet.
    case downloaded
    /// Inside the command's transaction: the change and its signed ack are written, COMMIT
    /// has not run.
    case insideTransaction = "inside-transaction"
    /// An erasure's transaction is committed (its ack owed) and the write-ahead log not yet
    /// checkpointed and truncated (`scrub`): the thief's view of a device that crashed there
    /// (`CrashedErasureTests`). Comes before `committed`, which runs once `write` returns.
    case afterEraseCommitBeforeScrub = "after-erase-commit-before-scrub"
    /// Committed: the change is made and the ack is owed, not yet published.
    case committed
    /// The broker acknowledged the ack; the agent has not marked it sent yet.
    case ackDelivered = "ack-delivered"

    /// The steps a command of `action` passes.
    package static func steps(of action: DeviceAction) -> [AgentStep] {
        action == .secureDeletion
            ? allCases.filter { $0 != .downloaded } : allCases.filter { $0 != .afterEraseCommitBeforeScrub }
    }
}
