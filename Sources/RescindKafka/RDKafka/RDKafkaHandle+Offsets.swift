import CRdKafka

/// The offset queries behind a consumer's lag. Both block until the broker answers or the
/// timeout passes: call them on a `BlockingExecutor`, never on the cooperative pool.
extension RDKafkaHandle {
    /// Fills the list's offsets with the group's committed offsets, asked from the group
    /// coordinator (`rd_kafka_committed`); a partition without a commit gets `RD_KAFKA_OFFSET_INVALID`.
    func committed(_ list: RDKafkaTopicPartitionList, timeoutMilliseconds: Int32) -> RDKafkaCode {
        withPointer { client in list.withPointer { RDKafkaCode(rd_kafka_committed(client, $0, timeoutMilliseconds)) } }
    }

    /// The partition's low and high watermarks, asked from its leader (`rd_kafka_query_watermark_offsets`);
    /// the high watermark is the offset the next message will get.
    func watermarks(topic: String, partition: Int32, timeoutMilliseconds: Int32) -> (code: RDKafkaCode, low: Int64, high: Int64) {
        var low: Int64 = 0
        var high: Int64 = 0
        let code = withPointer { RDKafkaCode(rd_kafka_query_watermark_offsets($0, topic, partition, &low, &high, timeoutMilliseconds)) }
        return (code, low, high)
    }
}
