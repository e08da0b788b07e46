import CRdKafka

/// One `rd_kafka_event_t` lent by `RDKafkaQueue.poll`: valid only inside the poll's closure,
/// which destroys it afterwards; anything kept must be copied there.
struct RDKafkaEvent {
    enum Kind {
        /// Fetched messages (consumer queue).
        case fetch
        /// Delivery reports (producer main queue).
        case deliveryReport
        case rebalance
        case error
        case log
        /// The result of an admin request (CreateTopics, …).
        case other
    }

    let pointer: OpaquePointer

    var kind: Kind {
        switch rd_kafka_event_type(pointer) {
        case RD_KAFKA_EVENT_FETCH: .fetch
        case RD_KAFKA_EVENT_DR: .deliveryReport
        case RD_KAFKA_EVENT_REBALANCE: .rebalance
        case RD_KAFKA_EVENT_ERROR: .error
        case RD_KAFKA_EVENT_LOG: .log
        default: .other
        }
    }

    /// The event's code: for a rebalance, `.assignPartitions` or `.revokePartitions` (or a failure).
    var code: RDKafkaCode { RDKafkaCode(rd_kafka_event_error(pointer)) }

    /// Lends each message of a fetch or delivery-report event to `body`, in order.
    func forEachMessage(_ body: (RDKafkaMessage) -> Void) {
        while let message = rd_kafka_event_message_next(pointer) {
            body(RDKafkaMessage(pointer: message))
        }
    }

    /// A copy of the partitions of a rebalance event.
    func copyTopicPartitionList() -> RDKafkaTopicPartitionList? {
        rd_kafka_event_topic_partition_list(pointer).map { RDKafkaTopicPartitionList(copying: $0) }
    }
}

/// One `rd_kafka_message_t` lent inside an event; copy what must outlive the event.
struct RDKafkaMessage {
    let pointer: UnsafePointer<rd_kafka_message_t>

    var code: RDKafkaCode { RDKafkaCode(pointer.pointee.err) }

    /// The id a producer attached when it queued the message (`RDKafkaHandle.produce`).
    var deliveryID: UInt { UInt(bitPattern: pointer.pointee._private) }

    var topic: String { pointer.pointee.rkt.map { String(cString: rd_kafka_topic_name($0)) } ?? "" }
    var partition: Int32 { pointer.pointee.partition }
    var offset: Int64 { pointer.pointee.offset }

    /// A copy that owns all its bytes.
    func copy() -> KafkaMessage { KafkaMessage(copying: pointer) }
}
