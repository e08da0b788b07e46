import Synchronization

/// Whether the input consumer is stuck retrying a transient failure, for `/ready` and
/// `/metrics`: a replica that cannot reach its database is alive but not ready.
final class ConsumerHealth: Sendable {
    /// Consecutive transient failures after which the replica reports itself not ready.
    static let unreadyAfter = 3

    private let failures = Mutex(0)

    func failed() -> Int { failures.withLock { $0 += 1; return $0 } }
    func recovered() { failures.withLock { $0 = 0 } }
    var consecutiveFailures: Int { failures.withLock { $0 } }
    var isReady: Bool { consecutiveFailures < Self.unreadyAfter }
}
