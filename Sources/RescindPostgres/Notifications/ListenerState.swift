import Foundation
import RescindObservability

/// The stop flag a listener's thread checks, with a sleep that `stop()` cuts short.
final class ListenerState: @unchecked Sendable {
    // @unchecked Sendable: `stopped` is only read and written while holding `condition`.
    private let condition = NSCondition()
    private var stopped = false

    var isStopped: Bool {
        condition.lock()
        defer { condition.unlock() }
        return stopped
    }

    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    /// Blocks the calling thread for `duration`, or until `stop()`.
    func sleep(for duration: Duration) {
        let deadline = Date(timeIntervalSinceNow: duration.seconds)
        condition.lock()
        defer { condition.unlock() }
        while !stopped, condition.wait(until: deadline) {}
    }
}
