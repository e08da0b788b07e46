/// How far a consumer group is behind on one partition, in messages.
public struct KafkaPartitionLag: Sendable, Hashable {
    public var topic: String
    public var partition: Int32
    /// The group's committed offset (the next message it will handle); `nil` before its first commit.
    public var committedOffset: Int64?
    /// The offset the next message published to the partition will get.
    public var highWatermark: Int64
    /// Messages published and not yet committed by the group: the high watermark minus the
    /// committed offset; before the first commit, every message the partition retains (high
    /// minus low watermark), which is what a consumer starting from the earliest offset has ahead.
    public var messages: Int64

    public init(topic: String, partition: Int32, committedOffset: Int64?, highWatermark: Int64, messages: Int64) {
        self.topic = topic
        self.partition = partition
        self.committedOffset = committedOffset
        self.highWatermark = highWatermark
        self.messages = messages
    }
}

extension KafkaConsumer {
    /// Asks the brokers how far the group is behind on each partition assigned to this consumer
    /// now: the committed offsets from the group coordinator, the high watermarks from each
    /// partition's leader. Counts only what is committed, so a message fetched or in hand but
    /// not yet committed still counts as behind. The queries run on a queue of their own, off
    /// the poll thread and Swift's cooperative pool.
    ///
    /// With no partition assigned (before the group's first rebalance, or more members than
    /// partitions) it returns an empty list after asking the cluster's metadata, so that a
    /// return always means the brokers answered.
    /// - Parameter timeout: for each broker request.
    /// - Throws: `KafkaError` `.offsets` when a broker does not answer in time or refuses;
    ///   `.shutdown` after `close()`.
    public func lag(timeout: Duration = .seconds(5)) async throws -> [KafkaPartitionLag] {
        guard !isClosing else {
            throw KafkaError(code: .shutdown, detail: "the consumer was closed")
        }
        let (handle, assignment) = (self.handle, self.assignment)
        let milliseconds = timeout.clampedMilliseconds
        return try await offsetQueries.run {
            let partitions = assignment.current.sorted { ($0.topic, $0.partition) < ($1.topic, $1.partition) }
            guard !partitions.isEmpty else {
                do {
                    _ = try handle.topicMetadata(timeoutMilliseconds: milliseconds)
                } catch let error as KafkaError {
                    throw KafkaError(code: .offsets, rdKafkaCode: error.rdKafkaCode, rdKafkaName: error.rdKafkaName, detail: error.detail)
                }
                return []
            }
            let list = RDKafkaTopicPartitionList(capacity: partitions.count)
            for partition in partitions { list.add(topic: partition.topic, partition: partition.partition) }
            let code = handle.committed(list, timeoutMilliseconds: milliseconds)
            guard code == .noError else {
                throw KafkaError(code: .offsets, rdKafka: code, detail: "committed offsets unavailable")
            }
            return try list.entries.map { entry in
                let (topic, partition) = (entry.topicPartition.topic, entry.topicPartition.partition)
                let marks = handle.watermarks(topic: topic, partition: partition, timeoutMilliseconds: milliseconds)
                guard marks.code == .noError else {
                    throw KafkaError(code: .offsets, rdKafka: marks.code, detail: "watermarks of \(topic)[\(partition)] unavailable")
                }
                let committed = entry.error == .noError && entry.offset >= 0 ? entry.offset : nil
                return KafkaPartitionLag(
                    topic: topic, partition: partition, committedOffset: committed, highWatermark: marks.high,
                    messages: max(0, marks.high - (committed ?? marks.low)))
            }
        }
    }
}
