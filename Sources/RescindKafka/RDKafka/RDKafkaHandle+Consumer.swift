import CRdKafka

/// The consumer calls of a client handle. Each returns librdkafka's answer as a Swift value.
extension RDKafkaHandle {
    /// Routes everything the main queue carries (logs, errors, rebalances) to the consumer queue
    /// (`rd_kafka_poll_set_consumer`).
    func redirectMainQueueToConsumer() -> RDKafkaCode {
        withPointer { RDKafkaCode(rd_kafka_poll_set_consumer($0)) }
    }

    /// Joins the group for the list's topics (`rd_kafka_subscribe`).
    func subscribe(_ list: RDKafkaTopicPartitionList) -> RDKafkaCode {
        withPointer { client in list.withPointer { RDKafkaCode(rd_kafka_subscribe(client, $0)) } }
    }

    /// Replaces the assignment with the list, or clears it when `list` is `nil` (`rd_kafka_assign`).
    func assign(_ list: RDKafkaTopicPartitionList?) -> RDKafkaCode {
        withPointer { client in
            guard let list else { return RDKafkaCode(rd_kafka_assign(client, nil)) }
            return list.withPointer { RDKafkaCode(rd_kafka_assign(client, $0)) }
        }
    }

    /// Adds the list to the assignment (cooperative rebalancing).
    func incrementalAssign(_ list: RDKafkaTopicPartitionList, code: KafkaError.Code) -> KafkaError? {
        withPointer { client in
            list.withPointer { rd_kafka_incremental_assign(client, $0) }.map { KafkaError(code: code, consuming: $0) }
        }
    }

    /// Removes the list from the assignment (cooperative rebalancing).
    func incrementalUnassign(_ list: RDKafkaTopicPartitionList, code: KafkaError.Code) -> KafkaError? {
        withPointer { client in
            list.withPointer { rd_kafka_incremental_unassign(client, $0) }.map { KafkaError(code: code, consuming: $0) }
        }
    }

    /// Whether the group uses the cooperative rebalance protocol (`rd_kafka_rebalance_protocol`).
    var usesCooperativeRebalancing: Bool {
        withPointer { String(cString: rd_kafka_rebalance_protocol($0)) } == "COOPERATIVE"
    }

    /// Synchronously commits the list's offsets (`rd_kafka_commit`, blocking).
    func commit(_ list: RDKafkaTopicPartitionList) -> RDKafkaCode {
        withPointer { client in list.withPointer { RDKafkaCode(rd_kafka_commit(client, $0, 0)) } }
    }

    /// Starts leaving the group; the revoke and the close arrive through `queue`, which must be
    /// served until `isConsumerClosed` (`rd_kafka_consumer_close_queue`).
    func closeConsumer(through queue: RDKafkaQueue, code: KafkaError.Code) -> KafkaError? {
        withPointer { client in
            queue.withPointer { rd_kafka_consumer_close_queue(client, $0) }.map { KafkaError(code: code, consuming: $0) }
        }
    }

    var isConsumerClosed: Bool {
        withPointer { rd_kafka_consumer_closed($0) } != 0
    }
}

extension KafkaStartOffset {
    /// librdkafka's logical offset for the start position (`RD_KAFKA_OFFSET_*`).
    var rdKafkaOffset: Int64 {
        switch self {
        case .beginning: Int64(RD_KAFKA_OFFSET_BEGINNING)
        case .end: Int64(RD_KAFKA_OFFSET_END)
        case .committed: Int64(RD_KAFKA_OFFSET_STORED)
        case .offset(let offset): offset
        }
    }
}
