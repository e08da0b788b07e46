extension KafkaAdmin {
    /// The topics that exist among `names`, from the cluster's metadata (partition count
    /// and replication factor, no configuration). Asking never creates a topic.
    /// - Throws: `KafkaError` `.admin` when no broker answered within `timeout`.
    public func existingTopics(
        _ names: [String], timeout: Duration = .seconds(10)
    ) async throws -> [String: KafkaTopic] {
        let handle = self.handle
        let wanted = Set(names)
        return try await blocking.run {
            let metadata = try handle.topicMetadata(timeoutMilliseconds: timeout.clampedMilliseconds)
            var found: [String: KafkaTopic] = [:]
            for (name, topic) in metadata where wanted.contains(name) {
                found[name] = KafkaTopic(
                    name: name, partitions: topic.partitions, replicationFactor: topic.replicationFactor)
            }
            return found
        }
    }

    /// The topics that exist among `names`, with their configuration (DescribeConfigs).
    /// - Throws: `KafkaError` `.admin` when the cluster does not answer in time or refuses
    ///   to describe a topic.
    public func describeTopics(
        _ names: [String], timeout: Duration = .seconds(10)
    ) async throws -> [String: KafkaTopic] {
        var found = try await existingTopics(names, timeout: timeout)
        let handle = self.handle
        let present = names.filter { found[$0] != nil }
        let configurations = try await blocking.run {
            try handle.describeTopicConfigs(present, timeout: timeout)
        }
        for (name, configuration) in configurations where found[name] != nil {
            found[name]?.configuration = configuration
        }
        return found
    }
}
