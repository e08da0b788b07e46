import Dispatch
import Logging
import RescindObservability

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
        if let closeError = handle.closeConsumer(through: queue, code: .consume) {
            logger.error("consumer close failed", metadata: [LogKey.error: "\(closeError)"])
        } else {
            let deadline = ContinuousClock.now + .seconds(60)
            while !handle.isConsumerClosed, ContinuousClock.now < deadline {
                queue.poll(timeoutMilliseconds: 100) { serve($0, closing: true) }
            }
        }
        assignment.removeAll()
        continuation.finish(throwing: failure)
    }

    private func serve(_ event: RDKafkaEvent, closing: Bool) {
        switch event.kind {
        case .fetch:
            event.forEachMessage { deliver($0, closing: closing) }
        case .rebalance:
            rebalance(event)
        case .error:
            if let fatal = RDKafkaLog.handleError(event, logger: logger, code: .consume) {
                failure = fatal
            }
        case .log:
            RDKafkaLog.forwardLog(event, to: logger)
        case .deliveryReport, .other:
            break
        }
    }

    private func deliver(_ message: RDKafkaMessage, closing: Bool) {
        let error = message.code
        guard error == .noError else {
            if error == .unknownTopicOrPartition || error == .unknownTopic {
                // A subscribed topic not created yet: the subscription stays, and the topic is
                // picked up at the next metadata refresh (`metadataRefreshInterval`).
                logger.notice("subscribed topic does not exist yet", metadata: [LogKey.error: "\(KafkaError(code: .consume, rdKafka: error))"])
            } else if error != .partitionEOF {
                logger.warning("consumer error", metadata: [LogKey.error: "\(KafkaError(code: .consume, rdKafka: error))"])
            }
            return
        }
        guard !closing else { return }
        gate.willBuffer()
        if case .enqueued = continuation.yield(message.copy()) { return }
        gate.didUnbuffer()
    }

    /// Applies a group assignment change. On revoke, the partitions are first dropped
    /// from `assignment` (no new commit for them starts), then every commit already
    /// requested is waited for (commit before revoke), then they are unassigned.
    private func rebalance(_ event: RDKafkaEvent) {
        let code = event.code
        guard let list = event.copyTopicPartitionList() else { return }
        let partitions = list.entries.map(\.topicPartition)
        let cooperative = handle.usesCooperativeRebalancing
        let described = partitions.map { "\($0.topic)[\($0.partition)]" }.joined(separator: ", ")

        switch code {
        case .assignPartitions:
            logger.info("partitions assigned", metadata: [LogKey.partitions: "\(described)"])
            assignment.add(partitions)
            if cooperative {
                if let error = handle.incrementalAssign(list, code: .subscription) { report(error) }
            } else {
                report(handle.assign(list))
            }
        case .revokePartitions:
            logger.info("partitions revoked", metadata: [LogKey.partitions: "\(described)"])
            assignment.remove(partitions)
            commits.drain()
            if cooperative {
                if let error = handle.incrementalUnassign(list, code: .subscription) { report(error) }
            } else {
                report(handle.assign(nil))
            }
        default:
            logger.error("rebalance failed", metadata: [LogKey.error: "\(KafkaError(code: .subscription, rdKafka: code))"])
            assignment.removeAll()
            report(handle.assign(nil))
        }
    }

    private func report(_ error: RDKafkaCode) {
        guard error != .noError else { return }
        report(KafkaError(code: .subscription, rdKafka: error))
    }

    private func report(_ error: KafkaError) {
        logger.error("applying a rebalance failed", metadata: [LogKey.error: "\(error)"])
    }
}
