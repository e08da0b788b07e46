import CRdKafka

/// A topic and partition, the unit of assignment and commit.
struct TopicPartition: Hashable, Sendable {
    var topic: String
    var partition: Int32
}

/// Owns one `rd_kafka_topic_partition_list_t`, destroyed in `deinit`.
final class RDKafkaTopicPartitionList {
    struct Entry {
        var topicPartition: TopicPartition
        var offset: Int64
        var error: RDKafkaCode
    }

    private let pointer: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>

    init(capacity: Int = 1) {
        pointer = rd_kafka_topic_partition_list_new(Int32(clamping: capacity))
    }

    /// Copies a list librdkafka lends (for example inside a rebalance event).
    init(copying list: UnsafePointer<rd_kafka_topic_partition_list_t>) {
        pointer = rd_kafka_topic_partition_list_copy(list)
    }

    deinit {
        rd_kafka_topic_partition_list_destroy(pointer)
    }

    func add(topic: String, partition: Int32, offset: Int64 = Int64(RD_KAFKA_OFFSET_INVALID)) {
        let element = rd_kafka_topic_partition_list_add(pointer, topic, partition)
        element?.pointee.offset = offset
    }

    var entries: [Entry] {
        let list = pointer.pointee
        return (0..<Int(list.cnt)).map { index in
            let element = list.elems[index]
            return Entry(
                topicPartition: TopicPartition(topic: String(cString: element.topic), partition: element.partition),
                offset: element.offset,
                error: RDKafkaCode(element.err)
            )
        }
    }

    /// Adds a topic for a group subscription (any partition).
    func add(subscribingTo topic: String) {
        add(topic: topic, partition: RD_KAFKA_PARTITION_UA)
    }

    func withPointer<T>(_ body: (UnsafeMutablePointer<rd_kafka_topic_partition_list_t>) throws -> T) rethrows -> T {
        try body(pointer)
    }
}
