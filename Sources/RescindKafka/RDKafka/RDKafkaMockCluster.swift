import CRdKafka
import Foundation

/// DEVELOPMENT AND TESTS ONLY, for the dev kit's `DevelopmentCluster`: the thin wrapper of
/// librdkafka's mock cluster (`rd_kafka_mock_cluster_new`), kept here because this folder is
/// the only place that calls librdkafka. Not part of the product's API (`@_spi(DevKit)`).
///
/// Every call is synchronous: the mock posts it to its own thread and waits for the answer
/// (sometimes until its next 1 s tick), so callers run it off Swift's cooperative pool.
@_spi(DevKit) public final class RDKafkaMockCluster: @unchecked Sendable {
    // Safe: the mock cluster API may be called from any thread; `cluster` and `host` are read
    // and cleared only under `lock`, so no call races with destruction.
    private let lock = NSLock()
    private var cluster: OpaquePointer?
    private var host: RDKafkaHandle?

    /// Comma-separated `127.0.0.1:port` list, one per broker.
    public let bootstrapServers: String
    /// `1...brokers`.
    public let brokerIDs: ClosedRange<Int32>

    /// The version of the librdkafka this process loaded (`rd_kafka_version_str`), whose mock
    /// cluster this is: Debian's 2.0.2, or another one put first on `LD_LIBRARY_PATH`.
    public static var libraryVersion: String { loadedVersion() }

    private static func loadedVersion() -> String { String(cString: rd_kafka_version_str()) }

    /// - Throws: `KafkaError` `.developmentCluster` when `brokers` is outside 1...64 or
    ///   librdkafka cannot start the mock (no free port, …).
    public init(brokers: Int) throws {
        guard brokers >= 1, brokers <= 64 else {
            throw KafkaError(code: .developmentCluster, detail: "broker count must be in 1...64")
        }
        // The mock is hosted by a client handle of its own; it only needs to stay quiet.
        let host = try RDKafkaHandle(kind: .producer, properties: ["log_level": "3"], events: [], logsOnMainQueue: false)
        guard let cluster = host.withPointer({ rd_kafka_mock_cluster_new($0, Int32(brokers)) }) else {
            throw KafkaError(code: .developmentCluster, detail: "rd_kafka_mock_cluster_new failed")
        }
        self.host = host
        self.cluster = cluster
        bootstrapServers = String(cString: rd_kafka_mock_cluster_bootstraps(cluster))
        brokerIDs = 1...Int32(brokers)
    }

    deinit {
        destroy()
    }

    /// Stops every broker and frees the cluster. Blocks up to about a second. Safe to call twice.
    public func destroy() {
        lock.withLock {
            if let cluster { rd_kafka_mock_cluster_destroy(cluster) }
            cluster = nil
            host = nil
        }
    }

    /// Creates a topic. - Returns: `false` when it already existed.
    public func createTopic(name: String, partitions: Int32, replicationFactor: Int16) throws -> Bool {
        guard partitions >= 1, replicationFactor >= 1, Int32(replicationFactor) <= brokerIDs.upperBound else {
            throw KafkaError(
                code: .developmentCluster,
                detail: "topic '\(name)' needs partitions >= 1 and a replication factor in 1...\(brokerIDs.upperBound)"
            )
        }
        let error = try withCluster { rd_kafka_mock_topic_create($0, name, partitions, Int32(replicationFactor)) }
        switch error {
        case RD_KAFKA_RESP_ERR_NO_ERROR: return true
        case RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS: return false
        default: throw KafkaError(code: .developmentCluster, rdKafka: RDKafkaCode(error), detail: "creating topic '\(name)' failed")
        }
    }

    public func setBrokerDown(_ brokerID: Int32) throws {
        try check(try withCluster { rd_kafka_mock_broker_set_down($0, brokerID) }, "setting broker \(brokerID) down")
    }

    public func setBrokerUp(_ brokerID: Int32) throws {
        try check(try withCluster { rd_kafka_mock_broker_set_up($0, brokerID) }, "setting broker \(brokerID) up")
    }

    public func setPartitionLeader(topic: String, partition: Int32, brokerID: Int32) throws {
        try check(
            try withCluster { rd_kafka_mock_partition_set_leader($0, topic, partition, brokerID) },
            "moving the leader of \(topic)[\(partition)]")
    }

    /// Makes `brokerID` the coordinator of consumer group `group` (instead of the broker the
    /// mock picks by hashing the group id, up or not), as a controller would after the old one died.
    public func setGroupCoordinator(group: String, brokerID: Int32) throws {
        try check(
            try withCluster { rd_kafka_mock_coordinator_set($0, "group", group, brokerID) },
            "moving the coordinator of group \(group)")
    }

    /// The next `errors.count` requests of protocol API `apiKey` fail with these Kafka error codes.
    public func pushRequestErrors(_ errors: [Int32], apiKey: Int16) throws {
        try withCluster { cluster in
            errors.map { rd_kafka_resp_err_t(rawValue: $0) }.withUnsafeBufferPointer { buffer in
                rd_kafka_mock_push_request_errors_array(cluster, apiKey, buffer.count, buffer.baseAddress)
            }
        }
    }

    public func clearRequestErrors(apiKey: Int16) throws {
        try withCluster { rd_kafka_mock_clear_request_errors($0, apiKey) }
    }

    private func withCluster<T>(_ body: (OpaquePointer) -> T) throws -> T {
        try lock.withLock {
            guard let cluster else {
                throw KafkaError(code: .developmentCluster, detail: "the development cluster was shut down")
            }
            return body(cluster)
        }
    }

    private func check(_ error: rd_kafka_resp_err_t, _ action: String) throws {
        guard error == RD_KAFKA_RESP_ERR_NO_ERROR else {
            throw KafkaError(code: .developmentCluster, rdKafka: RDKafkaCode(error), detail: "\(action) failed")
        }
    }
}
