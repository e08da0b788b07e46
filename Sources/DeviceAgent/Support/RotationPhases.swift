import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where one FMK rotation's time went, from the moment the agent starts the command until its
/// ack is handed to the producer, so that the fan-out's latency can be split by phase.
/// Wall-clock phases follow one another, so
/// `key + download + verify + store` is the ack's `duration_ms` ("agent work", up to the
/// rounding of the ack's milliseconds) and `commit + handOff` is what "ack → published" adds
/// before the producer stamps the message. `verifyCPU` and `storeCPU` are the CPU time of the
/// thread that ran those two synchronous phases (the rest is waiting for a core or the disk).
public struct RotationPhases: Sendable, Equatable {
    /// From the command's start to a verified key: the FMK and the key statements over HTTP,
    /// Ed25519 verification, the key history's write and fsync (`session.verifiedKey`).
    public var key: Duration = .zero
    /// The change feed's pages (HTTP, binary decoding), without verifying them.
    public var download: Duration = .zero
    /// AEAD-opening every downloaded record under the new FMK.
    public var verify: Duration = .zero
    /// From the records verified to the ack signed inside the store's transaction: waiting for
    /// the store's queue, re-wrapping at rest, the SQL, the ack's signature (its `acked_at`).
    public var store: Duration = .zero
    /// From the ack signed to the transaction committed and the store's call returned: the
    /// synced COMMIT (the log's fsync) and whatever follows it in the store.
    public var commit: Duration = .zero
    /// From the store's return to the ack handed to the producer: the publisher's wake-up and
    /// its read of the outbox (and any publish pass in progress when the ack was written).
    public var handOff: Duration = .zero
    /// CPU time of the verifying thread.
    public var verifyCPU: Duration = .zero
    /// CPU time of the store's thread from the transaction's start to the ack signed.
    public var storeCPU: Duration = .zero

    public init() {}

    /// The phases in order, named as in the metrics' `phase` label.
    public var named: [(phase: String, duration: Duration)] {
        [("key", key), ("download", download), ("verify", verify), ("store", store), ("commit", commit), ("hand_off", handOff)]
    }

    /// CPU time of the calling thread so far.
    static func threadCPU() -> Duration {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
    }
}

/// Collects one rotation's phases as it runs (the fetcher, the store and the publisher each add
/// theirs). Sendable: the phases are marked from whichever thread runs them.
final class RotationTimer: Sendable {
    private struct State {
        var phases = RotationPhases()
        var mark: ContinuousClock.Instant
    }

    private let state: Mutex<State>

    init(started: ContinuousClock.Instant) {
        state = Mutex(State(mark: started))
    }

    var phases: RotationPhases { state.withLock { $0.phases } }

    /// Ends the phase running since the last mark: adds its time to `phase` and marks now.
    func end(_ phase: WritableKeyPath<RotationPhases, Duration>, at now: ContinuousClock.Instant = .now) {
        state.withLock { state in
            state.phases[keyPath: phase] += now - state.mark
            state.mark = now
        }
    }

    /// Adds `duration` to `phase` (a CPU figure, or a phase measured apart from the marks).
    func add(_ duration: Duration, to phase: WritableKeyPath<RotationPhases, Duration>) {
        state.withLock { $0.phases[keyPath: phase] += duration }
    }
}

/// The recent rotations' phases by ack id, finished when the publisher hands the ack to the
/// producer; then recorded in the metrics and kept (the last `capacity`) for `DeviceAgent.rotationPhases`.
final class RotationLog: Sendable {
    private struct Entry {
        var timer: RotationTimer
        var committedAt: ContinuousClock.Instant
        var handedOff: RotationPhases?
    }

    private let entries = Mutex<[UUID: Entry]>([:])
    private let order = Mutex<[UUID]>([])
    let capacity: Int

    init(capacity: Int = 64) {
        self.capacity = capacity
    }

    /// A rotation whose ack `ackID` was committed at `committedAt` (its `commit` phase ends then).
    func committed(_ ackID: UUID, timer: RotationTimer, at committedAt: ContinuousClock.Instant) {
        timer.end(\.commit, at: committedAt)
        let dropped = order.withLock { order -> [UUID] in
            order.append(ackID)
            guard order.count > capacity else { return [] }
            let dropped = Array(order.prefix(order.count - capacity))
            order.removeFirst(dropped.count)
            return dropped
        }
        entries.withLock { entries in
            entries[ackID] = Entry(timer: timer, committedAt: committedAt)
            for id in dropped { entries[id] = nil }
        }
    }

    /// The acks in `ackIDs` handed to the producer now: their rotations' phases, finished.
    func handedOff(_ ackIDs: [UUID], at now: ContinuousClock.Instant = .now) -> [RotationPhases] {
        entries.withLock { entries in
            ackIDs.compactMap { id -> RotationPhases? in
                guard var entry = entries[id], entry.handedOff == nil else { return nil }
                var phases = entry.timer.phases
                phases.handOff = now - entry.committedAt
                entry.handedOff = phases
                entries[id] = entry
                return phases
            }
        }
    }

    /// The phases of the rotation acked by `ackID`, once its ack was handed to the producer.
    func phases(ackID: UUID) -> RotationPhases? {
        entries.withLock { $0[ackID]?.handedOff }
    }
}
