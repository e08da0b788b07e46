import Foundation

/// The partitions this consumer currently owns. Messages and commits of a partition
/// that was revoked are dropped: its new owner reads it again from the committed offset.
final class AssignmentTracker: @unchecked Sendable {
    // Safe: `partitions` is only accessed while holding `lock`.
    private let lock = NSLock()
    private var partitions: Set<TopicPartition>

    init(_ partitions: Set<TopicPartition> = []) {
        self.partitions = partitions
    }

    func contains(_ partition: TopicPartition) -> Bool {
        lock.withLock { partitions.contains(partition) }
    }

    func add(_ added: some Sequence<TopicPartition>) {
        lock.withLock { partitions.formUnion(added) }
    }

    func remove(_ removed: some Sequence<TopicPartition>) {
        lock.withLock { partitions.subtract(removed) }
    }

    func removeAll() {
        lock.withLock { partitions.removeAll() }
    }

    var current: Set<TopicPartition> {
        lock.withLock { partitions }
    }
}
