import CRdKafka

/// librdkafka's response code (`rd_kafka_resp_err_t`) as a Swift value, so that code outside
/// `RDKafka/` can compare and report codes without touching the C type.
struct RDKafkaCode: Hashable, Sendable {
    let rawValue: Int32

    init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    init(_ error: rd_kafka_resp_err_t) {
        rawValue = error.rawValue
    }

    var cValue: rd_kafka_resp_err_t { rd_kafka_resp_err_t(rawValue: rawValue) }

    var isError: Bool { self != .noError }

    static let noError = RDKafkaCode(RD_KAFKA_RESP_ERR_NO_ERROR)
    /// `_PARTITION_EOF`: the consumer reached the end of a partition (informational).
    static let partitionEOF = RDKafkaCode(RD_KAFKA_RESP_ERR__PARTITION_EOF)
    /// `_QUEUE_FULL`: the producer's local queue is full; serve reports and retry.
    static let queueFull = RDKafkaCode(RD_KAFKA_RESP_ERR__QUEUE_FULL)
    /// `_TIMED_OUT`.
    static let timedOut = RDKafkaCode(RD_KAFKA_RESP_ERR__TIMED_OUT)
    /// `TOPIC_ALREADY_EXISTS`.
    static let topicAlreadyExists = RDKafkaCode(RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS)
    /// A subscribed topic the broker does not know (yet): the broker's and librdkafka's own code.
    static let unknownTopicOrPartition = RDKafkaCode(RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART)
    static let unknownTopic = RDKafkaCode(RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC)
    /// `_ASSIGN_PARTITIONS`: a rebalance event that assigns partitions.
    static let assignPartitions = RDKafkaCode(RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS)
    /// `_REVOKE_PARTITIONS`: a rebalance event that revokes partitions.
    static let revokePartitions = RDKafkaCode(RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS)

    /// librdkafka's generic text for the code (`rd_kafka_err2str`).
    var text: String { String(cString: rd_kafka_err2str(cValue)) }
}
