import Logging

extension KafkaConsumer {
    /// Commits `message.offset + 1` for its partition and returns once the group
    /// coordinator stored it: after a restart (or on whichever member gets the partition)
    /// the group continues with the next message.
    ///
    /// Commits are positional: committing a message also commits every earlier message
    /// of its partition. Commit only messages whose handling (and that of all earlier
    /// ones of the partition) has succeeded.
    /// - Throws: `KafkaError` `.commit` when the partition is no longer assigned to this
    ///   consumer (revoked by a rebalance) or the coordinator refused the commit; the
    ///   message will then be delivered again. `.shutdown` after `close()`.
    public func commit(_ message: KafkaMessage) async throws {
        guard !isClosing else {
            throw KafkaError(code: .shutdown, detail: "the consumer was closed")
        }
        let partition = TopicPartition(topic: message.topic, partition: message.partition)
        let (handle, assignment) = (self.handle, self.assignment)
        let nextOffset = message.offset + 1
        try await commits.run {
            // Checked on the commit queue: a revoke drains this queue after dropping the
            // partition, so a commit either runs before the partition is given up or not at all.
            guard assignment.contains(partition) else {
                throw KafkaError(
                    code: .commit,
                    detail: "\(partition.topic)[\(partition.partition)] is no longer assigned to this consumer"
                )
            }
            let list = RDKafkaTopicPartitionList()
            list.add(topic: partition.topic, partition: partition.partition, offset: nextOffset)
            let error = handle.commit(list)
            guard error == .noError else {
                throw KafkaError(code: .commit, rdKafka: error)
            }
        }
    }
}
