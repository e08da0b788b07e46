import Synchronization

/// Caps the event streams one replica serves at once. A stream holds a `Lease` for as long
/// as its response lives; the lease gives the slot back when it is released, however the
/// response ends (finished, client gone, write failed, never started).
final class StreamSlots: Sendable {
    final class Lease: Sendable {
        private let slots: StreamSlots

        fileprivate init(_ slots: StreamSlots) { self.slots = slots }

        deinit { slots.release() }
    }

    let capacity: Int
    private let open = Mutex(0)
    private let metrics: AuditMetrics?

    init(capacity: Int, metrics: AuditMetrics? = nil) {
        self.capacity = capacity
        self.metrics = metrics
    }

    /// A slot, or `nil` when all are taken.
    func acquire() -> Lease? {
        let count = open.withLock { open -> Int? in
            guard open < capacity else { return nil }
            open += 1
            return open
        }
        guard let count else {
            metrics?.streamsRefused.increment()
            return nil
        }
        metrics?.openStreams.set(to: Double(count))
        return Lease(self)
    }

    var inUse: Int { open.withLock { $0 } }

    private func release() {
        let count = open.withLock { open -> Int in
            open -= 1
            return open
        }
        metrics?.openStreams.set(to: Double(count))
    }
}
