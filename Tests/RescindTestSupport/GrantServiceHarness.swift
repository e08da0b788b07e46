import Foundation
import GrantService
import Logging
import RescindClient
import RescindCrypto
import RescindKafka
import RescindPostgres
import RescindProtocol
import ServiceLifecycle

/// A real grant service for one test: its own PostgreSQL schema on the test
/// database, its own Kafka cluster (librdkafka's mock broker over TCP, so tests
/// can take it down), listening on a free loopback port.
public struct GrantServiceHarness: Sendable {
    public static let partitions: Int32 = 2
    public let baseURL: URL
    public let schema: String
    public let topicPrefix: String
    public let cluster: DevelopmentCluster
    public let database: PostgresConfiguration
    public let serviceKey: Ed25519.PublicKey
    public let configuration: GrantServiceConfiguration
    private let group: ServiceGroup
    private let task: Task<Void, any Error>

    public static var databaseURL: String {
        ProcessInfo.processInfo.environment["RESCIND_DATABASE_URL"] ?? "postgres://rescind:rescind@127.0.0.1:54329/rescind"
    }

    public static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// Runs `body` against a fresh service and always tears it down.
    public static func with<Result>(
        _ adjust: (inout GrantServiceConfiguration) -> Void = { _ in },
        _ body: (GrantServiceHarness) async throws -> Result
    ) async throws -> Result {
        let harness = try await start(adjust)
        do {
            let result = try await body(harness)
            await harness.stop()
            return result
        } catch {
            await harness.stop()
            throw error
        }
    }

    public static func start(_ adjust: (inout GrantServiceConfiguration) -> Void = { _ in }) async throws -> GrantServiceHarness {
        let suffix = UUID().uuidString.prefix(8).lowercased()
        let cluster = try DevelopmentCluster()
        var configuration = GrantServiceConfiguration()
        configuration.http.host = "127.0.0.1"
        configuration.http.port = 0
        configuration.database.url = databaseURL
        configuration.database.schema = "grant_test_\(suffix)"
        configuration.database.poolSize = 6
        configuration.database.migrationsDirectory = repositoryRoot.appendingPathComponent("migrations/grant").path
        configuration.kafka.bootstrapServers = cluster.bootstrapServers
        configuration.kafka.topicPrefix = "t\(suffix)."
        configuration.signingKeyFile = FileManager.default.temporaryDirectory
            .appendingPathComponent("rescind-test-\(suffix)/grant.key").path
        configuration.createSigningKeyIfMissing = true
        configuration.outbox.pollInterval = .milliseconds(200)
        adjust(&configuration)
        for topic in Topic.allCases {
            _ = try await cluster.createTopic(name: configuration.kafka.topicPrefix + topic.rawValue, partitions: partitions)
        }

        var logger = Logger(label: "test.grant-service")
        logger.logLevel = ProcessInfo.processInfo.environment["RESCIND_TEST_LOG_LEVEL"].flatMap { Logger.Level(rawValue: $0) } ?? .warning
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let app = try await GrantServiceApplication.build(configuration: configuration, logger: logger) { port in
            portContinuation.yield(port)
        }
        // Stopped by graceful shutdown, as in production: cancelling a Hummingbird server while
        // connections arrive can trip NIO's "NIOAsyncWriter deinited without finish()" trap.
        let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
        let task = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw HarnessError.serverDidNotStart }

        var database = try PostgresConfiguration(url: databaseURL)
        database.searchPath = [configuration.database.schema]
        let keyData = try Data(contentsOf: URL(fileURLWithPath: configuration.signingKeyFile))
        var seed = [UInt8](keyData)
        return GrantServiceHarness(
            baseURL: URL(string: "http://127.0.0.1:\(port)")!, schema: configuration.database.schema,
            topicPrefix: configuration.kafka.topicPrefix, cluster: cluster, database: database,
            serviceKey: try Ed25519.PrivateKey(seed: &seed).publicKey, configuration: configuration, group: group,
            task: task)
    }

    public func stop() async {
        await group.triggerGracefulShutdown()
        // Bounded: a shutdown stuck on a hung connection must not hang the suite.
        let task = self.task
        let watchdog = Task {
            try await Task.sleep(for: .seconds(15))
            task.cancel()
        }
        _ = try? await task.value
        watchdog.cancel()
        try? await withConnection { connection in
            try await connection.execute("DROP SCHEMA IF EXISTS \(identifier: schema) CASCADE")
        }
        cluster.shutdown()
        try? FileManager.default.removeItem(
            at: URL(fileURLWithPath: configuration.signingKeyFile).deletingLastPathComponent())
    }

    /// A direct connection to the service's schema, for checking what is stored.
    public func withConnection<Result>(_ body: (PostgresConnection) async throws -> Result) async throws -> Result {
        let connection = try await PostgresConnection.connect(configuration: database, logger: Logger(label: "test.db"))
        do {
            let result = try await body(connection)
            await connection.close()
            return result
        } catch {
            await connection.close()
            throw error
        }
    }

    /// Registers a user with one device.
    public func user(_ name: String, device: String = "phone") async throws -> UserSession {
        try await UserSession.register(keys: .generate(), displayName: name, deviceName: "\(name)'s \(device)", baseURL: baseURL)
    }

    /// Reads `count` messages of a topic from the beginning (fails after `timeout`).
    public func messages(_ topic: Topic, count: Int, timeout: Duration = .seconds(20)) async throws -> [KafkaMessage] {
        let consumer = try KafkaConsumer(
            configuration: KafkaConsumerConfiguration(
                bootstrapServers: cluster.bootstrapServers, clientID: "test-reader"),
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
                for try await message in consumer.messages {
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
}
