import Synchronization

/// A coalescing "there is work" flag between tasks: the producer of work signals, the
/// worker waits for the flag or a timeout, whichever comes first.
///
/// A waiter is suspended on a continuation that `signal` resumes at once, so an idle worker
/// costs no wake-ups and a signal is seen without delay. Polling a flag instead kept idle
/// processes waking many times a second and made each signal wait half a polling period.
public final class WakeSignal: Sendable {
    private enum Slot {
        /// `wait` took an id and has not suspended yet.
        case armed
        /// Suspended until `signal`, the timeout or cancellation resumes it.
        case waiting(CheckedContinuation<Void, Never>)
        /// The timeout or cancellation came before the waiter suspended: it must not suspend.
        case released
    }

    private struct State {
        var pending = false
        var nextID: UInt64 = 0
        var slots: [UInt64: Slot] = [:]
    }

    private let state = Mutex(State())

    public init() {}

    /// Wakes every waiter now; with none waiting, the next `wait` returns at once.
    public func signal() {
        let woken = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            var woken: [CheckedContinuation<Void, Never>] = []
            for (id, slot) in state.slots {
                if case .waiting(let continuation) = slot {
                    woken.append(continuation)
                    state.slots[id] = nil
                }
            }
            // A waiter not suspended yet (armed) finds the flag when it suspends.
            if woken.isEmpty || state.slots.values.contains(where: { if case .armed = $0 { true } else { false } }) {
                state.pending = true
            }
            return woken
        }
        for continuation in woken { continuation.resume() }
    }

    /// Returns when signalled (consuming the signal) or after `timeout`.
    /// - Throws: `CancellationError` when the task is cancelled.
    public func wait(upTo timeout: Duration) async throws {
        try Task.checkCancellation()
        let id = state.withLock { state -> UInt64? in
            if state.pending {
                state.pending = false
                return nil
            }
            state.nextID += 1
            state.slots[state.nextID] = .armed
            return state.nextID
        }
        guard let id else { return }
        let timer = Task { [self] in
            try? await Task.sleep(for: timeout)
            release(id)
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if case .released = state.slots[id] { return true }
                    if state.pending {
                        state.pending = false
                        return true
                    }
                    state.slots[id] = .waiting(continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            release(id)
        }
        state.withLock { _ = $0.slots.removeValue(forKey: id) }
        timer.cancel()
        try Task.checkCancellation()
    }

    /// The timeout or cancellation of waiter `id`: resumes it if suspended, or keeps it from suspending.
    private func release(_ id: UInt64) {
        let continuation = state.withLock { state -> CheckedContinuation<Void, Never>? in
            switch state.slots[id] {
            case .waiting(let continuation):
                state.slots[id] = nil
                return continuation
            case .armed:
                state.slots[id] = .released
                return nil
            case .released, nil:
                return nil
            }
        }
        continuation?.resume()
    }
}
