import Foundation
import CRdKafka
import RescindObservability

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
    /// The host handle when the mock is a loaded library's (destroyed after the cluster).
    private var loadedHost: OpaquePointer?
    private let library: RDKafkaMockLibrary

    /// Comma-separated `127.0.0.1:port` list, one per broker.
    public let bootstrapServers: String
    /// `1...brokers`.
    public let brokerIDs: ClosedRange<Int32>

    /// The version of the librdkafka this process loaded (`rd_kafka_version_str`), whose mock
    /// cluster this is: Debian's 2.0.2, or another one put first on `LD_LIBRARY_PATH`.
    public static var libraryVersion: String { loadedVersion() }

    private static func loadedVersion() -> String { String(cString: rd_kafka_version_str()) }

    /// The version of the librdkafka whose mock this cluster is: `libraryVersion`, or that of
    /// the `mockLibrary` it was started with.
    public var mockLibraryVersion: String { library.version }

    /// - Parameters:
    ///   - mockLibrary: a librdkafka file whose mock to run instead of the linked library's
    ///     (`RDKafkaMockLibrary`); the process's clients keep the linked one.
    ///   - groupInitialRebalanceDelay: how long the mock waits for more members before it answers
    ///     a consumer group's first JoinGroup (Kafka's `group.initial.rebalance.delay.ms`); nil:
    ///     the library's own (3 s). Needs a library newer than 2.0.x.
    /// - Throws: `KafkaError` `.developmentCluster` when `brokers` is outside 1...64, the
    ///   library cannot be loaded or cannot set the delay, or it cannot start the mock (no free port, …).
    public init(brokers: Int, mockLibrary: String? = nil, groupInitialRebalanceDelay: Duration? = nil) throws {
        guard brokers >= 1, brokers <= 64 else {
            throw KafkaError(code: .developmentCluster, detail: "broker count must be in 1...64")
        }
        let library = try mockLibrary.map { try RDKafkaMockLibrary.load(path: $0) } ?? .linked
        var delayMilliseconds: Int32?
        if let groupInitialRebalanceDelay {
            let milliseconds = groupInitialRebalanceDelay.wholeMilliseconds
            guard milliseconds >= 0, milliseconds <= 300_000 else {
                throw KafkaError(code: .developmentCluster, detail: "the group's initial rebalance delay must be in 0...300 s")
            }
            guard library.groupInitialDelay != nil else {
                throw KafkaError(
                    code: .developmentCluster,
                    detail: "librdkafka \(library.version)'s mock cannot set the initial rebalance delay (it waits 3 s); load a newer one")
            }
            delayMilliseconds = Int32(milliseconds)
        }
        self.library = library
        // The mock is hosted by a client handle of its own; it only needs to stay quiet.
        let cluster: OpaquePointer?
        if library.path == nil {
            let host = try RDKafkaHandle(kind: .producer, properties: ["log_level": "3"], events: [], logsOnMainQueue: false)
            cluster = host.withPointer { library.clusterNew($0, Int32(brokers)) }
            self.host = host
        } else {
            let host = try library.newHost()
            cluster = library.clusterNew(host, Int32(brokers))
            if cluster == nil { library.clientDestroy?(host) } else { loadedHost = host }
        }
        guard let cluster else {
            host = nil
            throw KafkaError(code: .developmentCluster, detail: "rd_kafka_mock_cluster_new failed")
        }
        if let delayMilliseconds { library.groupInitialDelay?(cluster, delayMilliseconds) }
        self.cluster = cluster
        bootstrapServers = library.clusterBootstraps(cluster).map { String(cString: $0) } ?? ""
        brokerIDs = 1...Int32(brokers)
    }

    deinit {
        destroy()
    }

    /// Stops every broker and frees the cluster. Blocks up to about a second. Safe to call twice.
    public func destroy() {
        lock.withLock {
            if let cluster { library.clusterDestroy(cluster) }
            cluster = nil
            host = nil
            if let loadedHost { library.clientDestroy?(loadedHost) }
            loadedHost = nil
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
        let error = try withCluster { library.topicCreate($0, name, partitions, Int32(replicationFactor)) }
        switch error {
        case RD_KAFKA_RESP_ERR_NO_ERROR: return true
        case RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS: return false
        default: throw KafkaError(code: .developmentCluster, rdKafka: RDKafkaCode(error), detail: "creating topic '\(name)' failed")
        }
    }

    public func setBrokerDown(_ brokerID: Int32) throws {
        try check(try withCluster { library.brokerSetDown($0, brokerID) }, "setting broker \(brokerID) down")
    }

    public func setBrokerUp(_ brokerID: Int32) throws {
        try check(try withCluster { library.brokerSetUp($0, brokerID) }, "setting broker \(brokerID) up")
    }

    public func setPartitionLeader(topic: String, partition: Int32, brokerID: Int32) throws {
        try check(
            try withCluster { library.partitionSetLeader($0, topic, partition, brokerID) },
            "moving the leader of \(topic)[\(partition)]")
    }

    /// Makes `brokerID` the coordinator of consumer group `group` (instead of the broker the
    /// mock picks by hashing the group id, up or not), as a controller would after the old one died.
    public func setGroupCoordinator(group: String, brokerID: Int32) throws {
        try check(
            try withCluster { library.coordinatorSet($0, "group", group, brokerID) },
            "moving the coordinator of group \(group)")
    }

    /// The next `errors.count` requests of protocol API `apiKey` fail with these Kafka error codes.
    public func pushRequestErrors(_ errors: [Int32], apiKey: Int16) throws {
        try withCluster { cluster in
            errors.map { rd_kafka_resp_err_t(rawValue: $0) }.withUnsafeBufferPointer { buffer in
                library.pushRequestErrors(cluster, apiKey, buffer.count, buffer.baseAddress)
            }
        }
    }

    public func clearRequestErrors(apiKey: Int16) throws {
        try withCluster { library.clearRequestErrors($0, apiKey) }
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
