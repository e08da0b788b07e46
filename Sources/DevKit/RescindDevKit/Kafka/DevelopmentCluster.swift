import Dispatch
import Foundation
@_spi(DevKit) import RescindKafka

/// DEVELOPMENT AND TESTS ONLY: an in-process Kafka cluster, librdkafka's mock broker
/// (RescindKafka's `RDKafkaMockCluster`), listening on loopback TCP ports.
///
/// It speaks the Kafka protocol well enough for real clients (produce with idempotence,
/// fetch, consumer groups and offset commits) and can inject faults (brokers down,
/// request errors, leader moves). It keeps everything in memory, has no persistence,
/// no security and no Admin API (create topics with `createTopics`, not `KafkaAdmin`).
/// It lives in the dev kit, which the product never links: clients take
/// `bootstrapServers` from configuration like for any other cluster.
///
/// Brokers have ids `1...brokers`. The cluster lives until `shutdown()` or deinit.
/// Each request is a round trip to the mock's own thread, which librdkafka sometimes
/// only notices on its next 1 s tick; the async methods therefore wait on a private
/// dispatch queue, never on Swift's cooperative pool.
public final class DevelopmentCluster: Sendable {
    private let mock: RDKafkaMockCluster
    private let queue = DispatchQueue(label: "rescind.devkit.development-cluster")

    /// Comma-separated `127.0.0.1:port` list, one per broker, for `bootstrap.servers`.
    public var bootstrapServers: String { mock.bootstrapServers }
    /// `1...brokers`.
    public var brokerIDs: ClosedRange<Int32> { mock.brokerIDs }

    /// The version of the librdkafka this process loaded, whose clients it runs
    /// (Debian's is 2.0.2; `scripts/tansu.sh` puts 2.16.1 on `LD_LIBRARY_PATH`), and whose mock
    /// cluster this is unless `mockLibraryVariable` names another.
    public static var librdkafkaVersion: String { RDKafkaMockCluster.libraryVersion }

    /// The version of the librdkafka whose mock this cluster runs.
    public var mockLibrdkafkaVersion: String { mock.mockLibraryVersion }

    /// A librdkafka file whose mock cluster to run instead of the linked library's (the
    /// process's clients keep the linked one). `scripts/test.sh` names the 2.16 of
    /// `scripts/tansu.sh` for its first pass: Debian's 2.0.2 mock answers every consumer
    /// group's first join after a fixed 3 s, which each test starting a group paid.
    public static let mockLibraryVariable = "RESCIND_DEV_MOCK_LIBRDKAFKA"
    /// Milliseconds the mock waits for more members before answering a consumer group's first
    /// join (`group.initial.rebalance.delay.ms`; the mock's own default is 3000). Needs a mock
    /// newer than 2.0.x (`mockLibraryVariable`).
    public static let groupDelayVariable = "RESCIND_DEV_MOCK_GROUP_DELAY_MS"

    /// - Parameter environment: where `mockLibraryVariable` and `groupDelayVariable` are read.
    /// - Throws: `SettingError` when `groupDelayVariable` is not a number of milliseconds in
    ///   0...300000; `KafkaError` `.developmentCluster` when `brokers < 1`, `mockLibraryVariable`
    ///   names a file that is not a loadable librdkafka, its mock cannot set the delay, or it cannot
    ///   start (no free port, …).
    public init(brokers: Int = 1, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        let library = environment[Self.mockLibraryVariable].flatMap { $0.isEmpty ? nil : $0 }
        var delay: Duration?
        if let text = environment[Self.groupDelayVariable], !text.isEmpty {
            guard let milliseconds = Int(text), (0...300_000).contains(milliseconds) else {
                throw SettingError(
                    description: "\(Self.groupDelayVariable) must be a number of milliseconds in 0...300000, not '\(text)'")
            }
            delay = .milliseconds(milliseconds)
        }
        mock = try RDKafkaMockCluster(brokers: brokers, mockLibrary: library, groupInitialRebalanceDelay: delay)
    }

    /// A development-cluster variable that does not say what it must.
    public struct SettingError: Error, CustomStringConvertible {
        public let description: String
    }

    /// Stops every broker and frees the cluster; clients still connected see their
    /// connections fail. Blocks up to about a second. Safe to call twice.
    public func shutdown() {
        mock.destroy()
    }

    /// Creates a topic; "already exists" counts as success, as in `KafkaAdmin`.
    /// The mock also creates unknown topics on first use (4 partitions), so create
    /// every topic up front to get the partition count you want.
    @discardableResult
    public func createTopic(name: String, partitions: Int32, replicationFactor: Int16 = 1) async throws -> KafkaTopicCreationOutcome {
        let mock = self.mock
        let created = try await run { try mock.createTopic(name: name, partitions: partitions, replicationFactor: replicationFactor) }
        return created ? .created : .alreadyExisted
    }

    /// Creates every topic of the list (see `createTopic`).
    @discardableResult
    public func createTopics(_ topics: [KafkaTopic]) async throws -> [String: KafkaTopicCreationOutcome] {
        var outcomes: [String: KafkaTopicCreationOutcome] = [:]
        for topic in topics {
            outcomes[topic.name] = try await createTopic(
                name: topic.name, partitions: topic.partitions, replicationFactor: topic.replicationFactor
            )
        }
        return outcomes
    }

    /// Runs a blocking call of the mock on the private queue.
    func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }

    func withMock<T: Sendable>(_ body: @escaping @Sendable (RDKafkaMockCluster) throws -> T) async throws -> T {
        let mock = self.mock
        return try await run { try body(mock) }
    }
}
