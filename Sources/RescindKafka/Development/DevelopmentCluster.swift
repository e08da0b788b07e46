import Foundation

/// DEVELOPMENT AND TESTS ONLY: an in-process Kafka cluster, librdkafka's mock broker
/// (`rd_kafka_mock_cluster_new`), listening on loopback TCP ports.
///
/// It speaks the Kafka protocol well enough for real clients (produce with idempotence,
/// fetch, consumer groups and offset commits) and can inject faults (brokers down,
/// request errors, leader moves). It keeps everything in memory, has no persistence,
/// no security and no Admin API (create topics with `createTopics`, not `KafkaAdmin`).
/// Nothing in production may depend on it: clients take `bootstrapServers` from
/// configuration like for any other cluster.
///
/// Brokers have ids `1...brokers`. The cluster lives until `shutdown()` or deinit.
/// Each request is a round trip to the mock's own thread, which librdkafka sometimes
/// only notices on its next 1 s tick; the async methods therefore wait on a private
/// dispatch queue, never on Swift's cooperative pool.
public final class DevelopmentCluster: @unchecked Sendable {
    // Safe: the mock cluster API posts every request to the mock's own thread and waits
    // for its answer, so it may be called from any thread; `cluster` is read and cleared
    // only under `lock`, so no call races with destruction.
    private let lock = NSLock()
    private var cluster: RDKafkaMockCluster?
    private let blocking = BlockingExecutor(label: "rescind.kafka.development-cluster")

    /// Comma-separated `127.0.0.1:port` list, one per broker, for `bootstrap.servers`.
    public let bootstrapServers: String
    /// `1...brokers`.
    public let brokerIDs: ClosedRange<Int32>

    /// - Throws: `KafkaError` `.developmentCluster` when `brokers < 1` or librdkafka
    ///   cannot start the mock (no free port, …).
    public init(brokers: Int = 1) throws {
        guard brokers >= 1, brokers <= 64 else {
            throw KafkaError(code: .developmentCluster, detail: "broker count must be in 1...64")
        }
        let cluster = try RDKafkaMockCluster(brokers: brokers)
        self.cluster = cluster
        bootstrapServers = cluster.bootstrapServers
        brokerIDs = 1...Int32(brokers)
    }

    deinit {
        shutdown()
    }

    /// Stops every broker and frees the cluster; clients still connected see their
    /// connections fail. Blocks up to about a second. Safe to call twice.
    public func shutdown() {
        lock.withLock {
            // Destroys the mock (then its host handle) while holding the lock.
            cluster = nil
        }
    }

    /// Creates a topic; "already exists" counts as success, as in `KafkaAdmin`.
    /// The mock also creates unknown topics on first use (4 partitions), so create
    /// every topic up front to get the partition count you want.
    @discardableResult
    public func createTopic(name: String, partitions: Int32, replicationFactor: Int16 = 1) async throws -> KafkaTopicCreationOutcome {
        guard partitions >= 1, replicationFactor >= 1, Int32(replicationFactor) <= brokerIDs.upperBound else {
            throw KafkaError(
                code: .developmentCluster,
                detail: "topic '\(name)' needs partitions >= 1 and a replication factor in 1...\(brokerIDs.upperBound)"
            )
        }
        let error = try await withCluster { $0.createTopic(name: name, partitions: partitions, replicationFactor: Int32(replicationFactor)) }
        switch error {
        case .noError: return .created
        case .topicAlreadyExists: return .alreadyExisted
        default: throw KafkaError(code: .developmentCluster, rdKafka: error, detail: "creating topic '\(name)' failed")
        }
    }

    /// Creates every topic of the list (see `createTopic`).
    @discardableResult
    public func createTopics(_ topics: [KafkaTopicSpec]) async throws -> [String: KafkaTopicCreationOutcome] {
        var outcomes: [String: KafkaTopicCreationOutcome] = [:]
        for topic in topics {
            outcomes[topic.name] = try await createTopic(
                name: topic.name, partitions: topic.partitions, replicationFactor: topic.replicationFactor
            )
        }
        return outcomes
    }

    /// Lends the mock cluster under the lock, on the blocking queue.
    func withCluster<T: Sendable>(_ body: @escaping @Sendable (RDKafkaMockCluster) -> T) async throws -> T {
        try await blocking.run { [self] in
            try lock.withLock {
                guard let cluster else {
                    throw KafkaError(code: .developmentCluster, detail: "the development cluster was shut down")
                }
                return body(cluster)
            }
        }
    }

    func check(_ error: RDKafkaCode, _ action: String) throws {
        guard error == .noError else {
            throw KafkaError(code: .developmentCluster, rdKafka: error, detail: "\(action) failed")
        }
    }
}
