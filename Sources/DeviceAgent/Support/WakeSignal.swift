import Synchronization

/// A coalescing "there is work" flag between services: the producer of work signals, the
/// worker waits for the flag or a timeout, whichever comes first.
final class WakeSignal: Sendable {
    private let pending = Mutex(false)

    func signal() {
        pending.withLock { $0 = true }
    }

    /// Returns when signalled (consuming the signal) or after `timeout`.
    /// - Throws: `CancellationError` when the task is cancelled.
    func wait(upTo timeout: Duration) async throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if pending.withLock({ flag in defer { flag = false }; return flag }) { return }
            try await Task.sleep(for: .milliseconds(25))
        }
    }
}
