import Foundation

/// A dedicated OS thread that repeats one blocking step (a librdkafka queue poll with
/// a short timeout) until it is asked to stop or the step returns `false`.
///
/// Every long blocking librdkafka call of a client runs here, so none of them ever
/// occupies a thread of Swift's cooperative pool.
final class PollThread: @unchecked Sendable {
    // Safe: all mutable state below is only read or written while holding `lock`.
    private let lock = NSLock()
    private var stopRequested = false
    private var exited = false
    private var exitWaiters: [CheckedContinuation<Void, Never>] = []

    /// Starts the thread at once.
    /// - Parameters:
    ///   - step: one bounded blocking iteration; return `false` to end the loop.
    ///   - onExit: runs on the thread after the loop, before waiters are resumed
    ///     (where a consumer closes itself, for instance).
    init(name: String, step: @escaping @Sendable () -> Bool, onExit: @escaping @Sendable () -> Void) {
        let thread = Thread { [self] in
            while !self.isStopRequested, step() {}
            onExit()
            self.markExited()
        }
        thread.name = name
        thread.start()
    }

    var isStopRequested: Bool {
        lock.withLock { stopRequested }
    }

    /// Asks the loop to end after its current step; does not wait.
    func requestStop() {
        lock.withLock { stopRequested = true }
    }

    /// Suspends (without blocking a thread) until the loop and `onExit` have finished.
    func waitUntilExited() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let alreadyExited = lock.withLock {
                if !exited { exitWaiters.append(continuation) }
                return exited
            }
            if alreadyExited { continuation.resume() }
        }
    }

    private func markExited() {
        let waiters = lock.withLock {
            exited = true
            defer { exitWaiters = [] }
            return exitWaiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
