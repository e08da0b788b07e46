import RescindMacros

/// How far a consumer group is behind on one partition, in messages.
@MemberwiseInit
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
        try await queryAssigned(timeout: timeout) { handle, partitions, milliseconds in
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
                let marks = try Self.watermarks(of: entry.topicPartition, handle: handle, timeoutMilliseconds: milliseconds)
                let committed = entry.error == .noError && entry.offset >= 0 ? entry.offset : nil
                return KafkaPartitionLag(
                    topic: marks.topic, partition: marks.partition, committedOffset: committed, highWatermark: marks.high,
                    messages: max(0, marks.high - (committed ?? marks.low)))
            }
        }
    }

    /// Asks each assigned partition's leader for its watermarks: what a reader that must stop at
    /// "everything retained now" reads up to. Needs no consumer group.
    /// - Parameter timeout: for each broker request.
    /// - Throws: `KafkaError` `.offsets` when a leader does not answer in time; `.shutdown` after `close()`.
    public func watermarks(timeout: Duration = .seconds(5)) async throws -> [KafkaPartitionWatermarks] {
        try await queryAssigned(timeout: timeout) { handle, partitions, milliseconds in
            try partitions.map { try Self.watermarks(of: $0, handle: handle, timeoutMilliseconds: milliseconds) }
        }
    }

    /// Runs a blocking query about the partitions assigned now (sorted), on the offset-query
    /// queue, off the poll thread and Swift's cooperative pool.
    private func queryAssigned<Answer: Sendable>(
        timeout: Duration, _ query: @escaping @Sendable (RDKafkaHandle, [TopicPartition], Int32) throws -> Answer
    ) async throws -> Answer {
        guard !isClosing else {
            throw KafkaError(code: .shutdown, detail: "the consumer was closed")
        }
        let (handle, assignment) = (self.handle, self.assignment)
        let milliseconds = timeout.clampedMilliseconds
        return try await offsetQueries.run {
            try query(handle, assignment.current.sorted { ($0.topic, $0.partition) < ($1.topic, $1.partition) }, milliseconds)
        }
    }

    private static func watermarks(
        of partition: TopicPartition, handle: RDKafkaHandle, timeoutMilliseconds: Int32
    ) throws -> KafkaPartitionWatermarks {
        let marks = handle.watermarks(topic: partition.topic, partition: partition.partition, timeoutMilliseconds: timeoutMilliseconds)
        guard marks.code == .noError else {
            throw KafkaError(code: .offsets, rdKafka: marks.code, detail: "watermarks of \(partition.topic)[\(partition.partition)] unavailable")
        }
        return KafkaPartitionWatermarks(topic: partition.topic, partition: partition.partition, low: marks.low, high: marks.high)
    }
}

/// The offsets a partition holds: the oldest retained and the one the next message will get.
public struct KafkaPartitionWatermarks: Sendable, Hashable {
    public var topic: String
    public var partition: Int32
    public var low: Int64
    public var high: Int64
}
