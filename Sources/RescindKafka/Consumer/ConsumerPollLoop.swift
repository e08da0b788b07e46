import CRdKafka
import Dispatch
import Logging

/// The poll-thread side of a `KafkaConsumer`: serves the consumer queue (messages,
/// rebalances, errors, logs), hands messages to the sequence, and closes the
/// consumer when the thread ends.
final class ConsumerPollLoop: @unchecked Sendable {
    // Safe: `failure` is read and written only on the poll thread (`step` and `finish`
    // are only ever called there); everything else is immutable or itself thread-safe.

    private let queue: RDKafkaQueue
    private let continuation: AsyncThrowingStream<KafkaMessage, any Error>.Continuation
    private let gate: MessageBufferGate
    private let assignment: AssignmentTracker
    private let commits: BlockingExecutor
    private let logger: Logger
    private var failure: KafkaError?

    init(
        queue: RDKafkaQueue, continuation: AsyncThrowingStream<KafkaMessage, any Error>.Continuation,
        gate: MessageBufferGate, assignment: AssignmentTracker, commits: BlockingExecutor, logger: Logger
    ) {
        self.queue = queue
        self.continuation = continuation
        self.gate = gate
        self.assignment = assignment
        self.commits = commits
        self.logger = logger
    }

    private var handle: RDKafkaHandle { queue.handle }

    /// One poll-thread step: wait for room in the buffer, then up to 100 ms for one event.
    func step() -> Bool {
        guard gate.waitForRoom() else { return false }
        queue.poll(timeoutMilliseconds: 100) { serve($0, closing: false) }
        return failure == nil
    }

    /// Runs when the thread ends: leaves the group (revoking through the queue, which
    /// is served until librdkafka reports the consumer closed) and ends the sequence.
    func finish() {
        gate.beginClosing()
        let closeError = queue.withPointer { queuePointer in
            handle.withPointer { rd_kafka_consumer_close_queue($0, queuePointer) }
        }
        if let closeError {
            logger.error("consumer close failed", metadata: [LogKey.error: "\(KafkaError(code: .consume, consuming: closeError))"])
        } else {
            let deadline = ContinuousClock.now + .seconds(60)
            while handle.withPointer({ rd_kafka_consumer_closed($0) }) == 0, ContinuousClock.now < deadline {
                queue.poll(timeoutMilliseconds: 100) { serve($0, closing: true) }
            }
        }
        assignment.removeAll()
        continuation.finish(throwing: failure)
    }

    private func serve(_ event: OpaquePointer, closing: Bool) {
        switch rd_kafka_event_type(event) {
        case RD_KAFKA_EVENT_FETCH:
            while let message = rd_kafka_event_message_next(event) {
                deliver(message, closing: closing)
            }
        case RD_KAFKA_EVENT_REBALANCE:
            rebalance(event)
        case RD_KAFKA_EVENT_ERROR:
            if let fatal = RDKafkaLog.handleError(event, logger: logger, code: .consume) {
                failure = fatal
            }
        case RD_KAFKA_EVENT_LOG:
            RDKafkaLog.forwardLog(event, to: logger)
        default:
            break
        }
    }

    private func deliver(_ message: UnsafePointer<rd_kafka_message_t>, closing: Bool) {
        let error = message.pointee.err
        guard error == RD_KAFKA_RESP_ERR_NO_ERROR else {
            if error == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART || error == RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC {
                // A subscribed topic not created yet: the subscription stays, and the topic is
                // picked up at the next metadata refresh (`metadataRefreshInterval`).
                logger.notice("subscribed topic does not exist yet", metadata: [LogKey.error: "\(KafkaError(code: .consume, rdKafka: error))"])
            } else if error != RD_KAFKA_RESP_ERR__PARTITION_EOF {
                logger.warning("consumer error", metadata: [LogKey.error: "\(KafkaError(code: .consume, rdKafka: error))"])
            }
            return
        }
        guard !closing else { return }
        gate.willBuffer()
        if case .enqueued = continuation.yield(KafkaMessage(copying: message)) { return }
        gate.didUnbuffer()
    }

    /// Applies a group assignment change. On revoke, the partitions are first dropped
    /// from `assignment` (no new commit for them starts), then every commit already
    /// requested is waited for (commit before revoke), then they are unassigned.
    private func rebalance(_ event: OpaquePointer) {
        let code = rd_kafka_event_error(event)
        guard let list = rd_kafka_event_topic_partition_list(event) else { return }
        let partitions = RDKafkaTopicPartitionList(copying: list).entries.map(\.topicPartition)
        let cooperative = handle.withPointer { String(cString: rd_kafka_rebalance_protocol($0)) } == "COOPERATIVE"
        let described = partitions.map { "\($0.topic)[\($0.partition)]" }.joined(separator: ", ")

        switch code {
        case RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS:
            logger.info("partitions assigned", metadata: [LogKey.partitions: "\(described)"])
            assignment.add(partitions)
            handle.withPointer { client in
                if cooperative {
                    if let error = rd_kafka_incremental_assign(client, list) { report(KafkaError(code: .subscription, consuming: error)) }
                } else {
                    report(rd_kafka_assign(client, list))
                }
            }
        case RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS:
            logger.info("partitions revoked", metadata: [LogKey.partitions: "\(described)"])
            assignment.remove(partitions)
            commits.drain()
            handle.withPointer { client in
                if cooperative {
                    if let error = rd_kafka_incremental_unassign(client, list) { report(KafkaError(code: .subscription, consuming: error)) }
                } else {
                    report(rd_kafka_assign(client, nil))
                }
            }
        default:
            logger.error("rebalance failed", metadata: [LogKey.error: "\(KafkaError(code: .subscription, rdKafka: code))"])
            assignment.removeAll()
            handle.withPointer { report(rd_kafka_assign($0, nil)) }
        }
    }

    private func report(_ error: rd_kafka_resp_err_t) {
        guard error != RD_KAFKA_RESP_ERR_NO_ERROR else { return }
        report(KafkaError(code: .subscription, rdKafka: error))
    }

    private func report(_ error: KafkaError) {
        logger.error("applying a rebalance failed", metadata: [LogKey.error: "\(error)"])
    }
}
