import Foundation

/// A once-only flag: the first `begin()` wins, so shutdown and close run their work once.
final class ShutdownState: @unchecked Sendable {
    // Safe: `started` is only accessed while holding `lock`.
    private let lock = NSLock()
    private var started = false

    /// `true` for the first caller only.
    func begin() -> Bool {
        lock.withLock {
            defer { started = true }
            return !started
        }
    }

    var hasBegun: Bool { lock.withLock { started } }
}
