import Synchronization
import RescindClient

/// Holds the unlocked keys, or nothing while the agent is locked.
///
/// Locking drops the only long-lived reference: the guarded buffers of the keys are zeroed
/// and freed when the last user lets go (work already in progress finishes with the keys it
/// took; `AgentEngine.lock` waits for that work first).
final class KeyRing: Sendable {
    private let current: Mutex<UnlockedKeys?>

    init(_ keys: UnlockedKeys?) {
        current = Mutex(keys)
    }

    /// The keys, or `nil` while locked.
    var keys: UnlockedKeys? { current.withLock { $0 } }

    var isLocked: Bool { keys == nil }

    func set(_ keys: UnlockedKeys?) {
        current.withLock { $0 = keys }
    }

    /// The keys, or `AgentError.locked`.
    func unlocked() throws -> UnlockedKeys {
        guard let keys else { throw AgentError(.locked, "the agent is locked: unlock it (SIGUSR2) to do this") }
        return keys
    }
}
