import Logging

/// Cluster administration: topic creation through the Kafka Admin API
/// (`rd_kafka_CreateTopics`), against any broker given by configuration.
///
/// Note: librdkafka 2.0.2's mock broker (`DevelopmentCluster`) does not answer
/// CreateTopics (it names no usable controller, so the request ends in `_TIMED_OUT`);
/// create topics there with `DevelopmentCluster.createTopics`.
public final class KafkaAdmin: Sendable {
    let handle: RDKafkaHandle
    let blocking = BlockingExecutor(label: "rescind.kafka.admin.blocking")
    private let pollThread: PollThread

    /// - Parameter additionalProperties: raw librdkafka properties (security settings, …).
    public init(
        bootstrapServers: String, clientID: String = "rescind-admin",
        additionalProperties: [String: String] = [:], logger: Logger
    ) throws {
        var properties = ["bootstrap.servers": bootstrapServers, "client.id": clientID]
        properties.merge(additionalProperties) { _, raw in raw }
        properties["log.queue"] = "true"
        let handle = try RDKafkaHandle(
            kind: .producer, properties: properties,
            events: [.errors, .logs], logsOnMainQueue: true
        )
        let mainQueue = RDKafkaQueue.main(of: handle)
        self.handle = handle
        // Serves logs and errors of the admin client, as the producer's poll thread does.
        pollThread = PollThread(
            name: "rescind-kafka-admin",
            step: {
                mainQueue.poll(timeoutMilliseconds: 100) { event in
                    switch event.kind {
                    case .log: RDKafkaLog.forwardLog(event, to: logger)
                    case .error: _ = RDKafkaLog.handleError(event, logger: logger, code: .admin)
                    default: break
                    }
                }
                return true
            },
            onExit: {}
        )
    }

    deinit {
        pollThread.requestStop()
    }

    /// Creates the topics, treating "already exists" as success.
    /// - Parameter timeout: how long the controller may take to create them.
    /// - Returns: what happened to each topic, by name.
    /// - Throws: `KafkaError` `.admin` with the broker's code (for example
    ///   `INVALID_REPLICATION_FACTOR`) naming the first topic that failed, or with
    ///   `_TIMED_OUT` when no controller answered in time.
    public func createTopics(
        _ topics: [KafkaTopic], timeout: Duration = .seconds(30)
    ) async throws -> [String: KafkaTopicCreationOutcome] {
        let handle = self.handle
        return try await blocking.run {
            try Self.createTopicsBlocking(topics, timeout: timeout, handle: handle)
        }
    }
}
