import Foundation
import Synchronization

/// The rejection counters of `device_commands` messages, taken in memory and written to the
/// store in batches.
///
/// Anyone who can write to the topic can key junk to this device, and every such message is the
/// agent's to judge, in partition order before the device's genuine commands. One store write
/// per rejection (a SQLite commit with its journal) made junk cost about 1 ms a message; batched,
/// a rejection costs a dictionary update. Written every `batch` rejections, `interval` after the
/// last write, whenever a genuine command is stored, and at stop; `status()` adds what is not
/// written yet. A crash loses at most the unwritten counts (diagnostics, not state).
final class RejectionCounters: Sendable {
    static let batch = 256
    static let interval = Duration.seconds(1)

    private struct State {
        var pending: [String: Int] = [:]
        var count = 0
        var lastWrite = ContinuousClock.now
    }

    private let state = Mutex(State())

    /// Counts one rejection. - Returns: whether a write is due.
    func add(_ name: String) -> Bool {
        state.withLock { state in
            state.pending[name, default: 0] += 1
            state.count += 1
            return state.count >= Self.batch || state.lastWrite.duration(to: .now) >= Self.interval
        }
    }

    /// Takes what is pending, to be written.
    func take() -> [String: Int] {
        state.withLock { state in
            defer { (state.pending, state.count, state.lastWrite) = ([:], 0, .now) }
            return state.pending
        }
    }

    /// Puts back counts whose write failed.
    func restore(_ counts: [String: Int]) {
        state.withLock { state in
            for (name, value) in counts {
                state.pending[name, default: 0] += value
                state.count += value
            }
        }
    }

    /// What is counted but not written yet.
    func unwritten() -> [String: Int] { state.withLock { $0.pending } }
}
