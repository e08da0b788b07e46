import Foundation
import GrantService
import Logging
import RescindClient
import RescindCrypto
import RescindDevKit
import RescindKafka
import RescindPostgres
import RescindProtocol
import RescindTLS

/// A real grant service for one test: its own PostgreSQL schema on the test
/// database, its own Kafka cluster (librdkafka's mock broker over TCP, so tests
/// can take it down), listening on a free loopback port over HTTPS with the suite's CA
/// (`TestTLS`), unless a test's `adjust` sets `http.tls` to `nil`.
public struct GrantServiceHarness: Sendable {
    public static let partitions: Int32 = 2
    public let baseURL: URL
    public let schema: String
    public let topicPrefix: String
    /// Its own development cluster (fault injection); the service runs on `bootstrapServers`,
    /// which is this cluster unless the suite runs on an external broker (`ServiceUnderTest.externalKafka`).
    public let cluster: DevelopmentCluster
    public var bootstrapServers: String { configuration.kafka.bootstrapServers }
    public let database: PostgresConfiguration
    public let serviceKey: Ed25519.PublicKey
    public let configuration: GrantServiceConfiguration
    /// How a client reaches it: the suite's CA, or plain HTTP to loopback when it serves plain.
    public let clientTLS: ClientTLS
    private let running: ServiceUnderTest

    public static var databaseURL: String {
        TestDatabases.url
    }

    public static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// Runs `body` against a fresh service and always tears it down.
    /// - Parameter createTopics: false starts the service before its topics exist (as a
    ///   deployment that skipped `rescind-admin migrate kafka`); `createTopics()` makes them later.
    public static func with<Result>(
        createTopics: Bool = true,
        _ adjust: (inout GrantServiceConfiguration) -> Void = { _ in },
        _ body: (GrantServiceHarness) async throws -> Result
    ) async throws -> Result {
        let harness = try await start(createTopics: createTopics, adjust)
        do {
            let result = try await body(harness)
            await harness.stop()
            return result
        } catch {
            await harness.stop()
            throw error
        }
    }

    public static func start(
        createTopics: Bool = true, _ adjust: (inout GrantServiceConfiguration) -> Void = { _ in }
    ) async throws -> GrantServiceHarness {
        let suffix = UUID().uuidString.prefix(8).lowercased()
        let tls = try await TestTLS.shared()
        let cluster = try DevelopmentCluster()
        var configuration = GrantServiceConfiguration()
        configuration.http.tls = tls.server("GRANT")
        configuration.http.host = "127.0.0.1"
        configuration.http.port = 0
        configuration.database.url = databaseURL
        configuration.database.schema = "grant_test_\(suffix)"
        configuration.database.poolSize = 6
        configuration.database.migrationsDirectory = repositoryRoot.appendingPathComponent("migrations/grant").path
        configuration.kafka.bootstrapServers = ServiceUnderTest.externalKafka ?? cluster.bootstrapServers
        configuration.kafka.topicPrefix = "t\(suffix)."
        configuration.signingKeyFile = FileManager.default.temporaryDirectory
            .appendingPathComponent("rescind-test-\(suffix)/grant.key").path
        configuration.createSigningKeyIfMissing = true
        configuration.outbox.pollInterval = .milliseconds(200)
        adjust(&configuration)
        if createTopics {
            try await ServiceUnderTest.createTopics(
                prefix: configuration.kafka.topicPrefix, partitions: partitions,
                bootstrapServers: configuration.kafka.bootstrapServers, on: cluster)
        }
        let logger = Logger.forTests("test.grant-service")
        let running = try await ServiceUnderTest.start(logger: logger, tls: configuration.http.tls != nil) { onServerRunning in
            try await GrantServiceApplication.build(configuration: configuration, logger: logger, onServerRunning: onServerRunning)
        }

        var database = try PostgresConfiguration(url: databaseURL)
        database.searchPath = [configuration.database.schema]
        return GrantServiceHarness(
            baseURL: running.baseURL, schema: configuration.database.schema, topicPrefix: configuration.kafka.topicPrefix,
            cluster: cluster, database: database,
            serviceKey: try ServiceUnderTest.publicKey(ofSigningKeyFile: configuration.signingKeyFile),
            configuration: configuration,
            clientTLS: configuration.http.tls != nil ? tls.client : ClientTLS(plainHTTP: .loopback), running: running)
    }

    public func stop() async {
        await running.stop()
        await TestDatabase.dropSchema(schema)
        cluster.shutdown()
        ServiceUnderTest.removeSigningKeyDirectory(of: configuration.signingKeyFile)
    }

    /// Creates the service's topics (for a harness started with `createTopics: false`).
    public func createTopics() async throws {
        try await ServiceUnderTest.createTopics(
            prefix: topicPrefix, partitions: Self.partitions, bootstrapServers: bootstrapServers, on: cluster)
    }

    /// A direct connection to the service's schema, for checking what is stored.
    @discardableResult
    public func withConnection<Result>(_ body: (PostgresConnection) async throws -> Result) async throws -> Result {
        try await TestDatabases.withConnection(to: database, body)
    }

    /// Whether an envelope claims to be a governance notice (`GovernanceNotice`).
    public static func isGovernanceNotice(_ value: Data?) -> Bool {
        SignedEnvelope.claimedSchema(value) == GovernanceNotice.schema
    }

    /// Registers a user with one device and a recovery key (`TestRecovery.key(for:)`).
    public func user(_ name: String, device: String = "phone") async throws -> UserSession {
        let keys = UserKeys.generate()
        return try await UserSession.register(
            keys: keys, displayName: name, deviceName: "\(name)'s \(device)", recoveryKey: try TestRecovery.key(for: keys.userID),
            baseURL: baseURL, tls: clientTLS)
    }

    /// Reads `count` messages of a topic from the beginning (fails after `timeout`): the topic's
    /// own messages, or with `governance` only the governance notices that share `device_commands`
    /// and `access_events` with them (`GovernanceNotice`).
    public func messages(
        _ topic: Topic, count: Int, governance: Bool = false, timeout: Duration = .seconds(20)
    ) async throws -> [KafkaMessage] {
        let consumer = try KafkaConsumer(
            configuration: KafkaConsumerConfiguration(
                bootstrapServers: bootstrapServers, clientID: "test-reader"),
            // Both partitions from the beginning: no group to join, so reading starts at once.
            subscription: .partitions(
                (0..<Self.partitions).map {
                    KafkaPartitionAssignment(topic: topicPrefix + topic.rawValue, partition: $0, start: .beginning)
                }),
            logger: Logger(label: "test.kafka"))
        defer { Task { await consumer.close() } }
        return try await withThrowingTaskGroup(of: [KafkaMessage].self) { group in
            group.addTask {
                var received: [KafkaMessage] = []
                for try await message in consumer.messages where Self.isGovernanceNotice(message.value) == governance {
                    received.append(message)
                    if received.count == count { break }
                }
                return received
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw HarnessError.timedOut("\(count) message(s) on \(topic.rawValue)")
            }
            let result = try await group.next()!
            group.cancelAll()
            return result
        }
    }
}

public enum HarnessError: Error {
    case serverDidNotStart
    case timedOut(String)
    case unexpected(String)
}
