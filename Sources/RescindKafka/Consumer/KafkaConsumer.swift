import Logging

/// A Kafka consumer with at-least-once delivery: offsets are committed only by
/// `commit(_:)`, which a caller invokes after handling a message (`run` does it for you).
///
/// Commit strategy: `enable.auto.commit=false` and `enable.auto.offset.store=false`;
/// `commit(_:)` synchronously commits `offset + 1` of that message and returns once the
/// group coordinator stored it. A crash between handling and commit means the message
/// is handled again, never skipped, so handlers must be idempotent.
///
/// Threads: one dedicated thread per consumer polls librdkafka (messages, rebalances,
/// errors, logs) and closes the consumer; commits run on a private serial dispatch
/// queue. Neither ever blocks Swift's cooperative pool. Rebalances are applied on the
/// poll thread; on revoke, commits already requested complete before the partitions
/// are given up.
public final class KafkaConsumer: Sendable {
    /// The consumed messages; ends after `close()`. Iterate it once.
    public let messages: KafkaMessageSequence

    let handle: RDKafkaHandle
    let assignment: AssignmentTracker
    let commits: BlockingExecutor
    /// The lag's broker queries, apart from commits so that a slow answer never delays one.
    let offsetQueries = BlockingExecutor(label: "rescind.kafka.consumer.offsets")
    let logger: Logger
    private let gate: MessageBufferGate
    private let pollThread: PollThread

    /// Creates the consumer and subscribes or assigns at once; fetching starts in the background.
    /// - Throws: `KafkaError` `.configuration`/`.clientCreation` for a rejected
    ///   configuration, `.subscription` when `.group` is used without `groupID` or
    ///   librdkafka refuses the subscription or assignment.
    public init(configuration: KafkaConsumerConfiguration, subscription: KafkaSubscription, logger: Logger) throws {
        if case .group = subscription, configuration.groupID == nil {
            throw KafkaError(code: .subscription, detail: "a group subscription needs a groupID")
        }
        let handle = try RDKafkaHandle(
            kind: .consumer,
            properties: configuration.properties,
            events: [.rebalances, .errors, .logs],
            logsOnMainQueue: true
        )
        // Everything the main queue carries (logs, errors, rebalances) now arrives on the consumer queue.
        let redirect = handle.redirectMainQueueToConsumer()
        guard redirect == .noError else {
            throw KafkaError(code: .clientCreation, rdKafka: redirect)
        }
        let assignment = AssignmentTracker()
        try Self.apply(subscription, to: handle, assignment: assignment)

        let gate = MessageBufferGate(capacity: configuration.maxBufferedMessages)
        let commits = BlockingExecutor(label: "rescind.kafka.consumer.commits")
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: KafkaMessage.self)
        let loop = ConsumerPollLoop(
            queue: .consumer(of: handle), continuation: continuation, gate: gate,
            assignment: assignment, commits: commits, logger: logger
        )
        let pollThread = PollThread(name: "rescind-kafka-consumer", step: loop.step, onExit: loop.finish)
        continuation.onTermination = { termination in
            // The iterating task was cancelled: nobody reads anymore, so leave the group.
            if case .cancelled = termination {
                gate.beginClosing()
                pollThread.requestStop()
            }
        }

        self.messages = KafkaMessageSequence(stream: stream, gate: gate, assignment: assignment)
        self.handle = handle
        self.assignment = assignment
        self.commits = commits
        self.logger = logger
        self.gate = gate
        self.pollThread = pollThread
    }

    deinit {
        // The poll thread closes the consumer and then releases the handle.
        gate.beginClosing()
        pollThread.requestStop()
    }

    /// Leaves the group (revoking its partitions, after pending commits complete) and
    /// ends `messages`. Messages fetched but not yet read are dropped (they were not
    /// committed). Returns once librdkafka reports the consumer closed. Safe to call twice.
    public func close() async {
        gate.beginClosing()
        pollThread.requestStop()
        await pollThread.waitUntilExited()
    }

    var isClosing: Bool { gate.isClosing }

    private static func apply(_ subscription: KafkaSubscription, to handle: RDKafkaHandle, assignment: AssignmentTracker) throws {
        let list = RDKafkaTopicPartitionList()
        let error: RDKafkaCode
        switch subscription {
        case .group(let topics):
            for topic in topics { list.add(subscribingTo: topic) }
            error = handle.subscribe(list)
        case .partitions(let partitions):
            for partition in partitions {
                list.add(topic: partition.topic, partition: partition.partition, offset: partition.start.rdKafkaOffset)
            }
            assignment.add(partitions.map { TopicPartition(topic: $0.topic, partition: $0.partition) })
            error = handle.assign(list)
        }
        guard error == .noError else {
            throw KafkaError(code: .subscription, rdKafka: error)
        }
    }
}
