import CRdKafka

/// What a broker's Metadata reply says about one topic.
struct RDKafkaTopicMetadata: Sendable, Hashable {
    var partitions: Int32
    /// The smallest replica count over the topic's partitions (0 for a topic without partitions).
    var replicationFactor: Int16
}

extension RDKafkaHandle {
    /// Asks the cluster for the metadata of every topic (`rd_kafka_metadata` with
    /// `all_topics`), which never creates a topic, whatever the broker's auto-creation
    /// setting. Blocks: call it on a `BlockingExecutor`.
    /// - Returns: the topics that exist, by name; topics the broker reports with an
    ///   error (being created, unknown) are left out.
    func topicMetadata(timeoutMilliseconds: Int32) throws -> [String: RDKafkaTopicMetadata] {
        var metadata: UnsafePointer<rd_kafka_metadata_t>?
        let error = withPointer { rd_kafka_metadata($0, 1, nil, &metadata, timeoutMilliseconds) }
        guard error == RD_KAFKA_RESP_ERR_NO_ERROR, let metadata else {
            throw KafkaError(code: .admin, rdKafka: RDKafkaCode(error), detail: "metadata request failed: \(String(cString: rd_kafka_err2str(error)))")
        }
        defer { rd_kafka_metadata_destroy(metadata) }
        var topics: [String: RDKafkaTopicMetadata] = [:]
        for index in 0..<Int(metadata.pointee.topic_cnt) {
            let topic = metadata.pointee.topics[index]
            guard topic.err == RD_KAFKA_RESP_ERR_NO_ERROR, let name = topic.topic else { continue }
            let count = Int(topic.partition_cnt)
            let replicas = (0..<count).map { Int16(clamping: topic.partitions[$0].replica_cnt) }.min() ?? 0
            topics[String(cString: name)] = RDKafkaTopicMetadata(partitions: topic.partition_cnt, replicationFactor: replicas)
        }
        return topics
    }
}
