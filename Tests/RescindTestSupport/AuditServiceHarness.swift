import AuditService
import Foundation
import Logging
import RescindCrypto
import RescindKafka
import RescindPostgres
import RescindProtocol
import ServiceLifecycle

/// A real audit service for one test: its own PostgreSQL schema, topics behind a unique
/// prefix on an in-process Kafka cluster (librdkafka's mock broker over TCP), a free
/// loopback port. It can be stopped gracefully and started again on the same schema,
/// cluster and consumer group (restart tests). To audit a `GrantServiceHarness`, pass its
/// cluster and topic prefix, and its URL or key (see `with(auditing:)`).
public final class AuditServiceHarness: Sendable {
    public static let partitions: Int32 = 2

    public let configuration: AuditServiceConfiguration
    public let cluster: DevelopmentCluster
    public let baseURL: URL
    public let auditKey: Ed25519.PublicKey
    private let group: ServiceGroup
    private let task: Task<Void, any Error>

    public var topicPrefix: String { configuration.kafka.topicPrefix }
    public var schema: String { configuration.database.schema }

    private init(
        configuration: AuditServiceConfiguration, cluster: DevelopmentCluster, baseURL: URL, auditKey: Ed25519.PublicKey,
        group: ServiceGroup, task: Task<Void, any Error>
    ) {
        self.configuration = configuration
        self.cluster = cluster
        self.baseURL = baseURL
        self.auditKey = auditKey
        self.group = group
        self.task = task
    }

    public static var logger: Logger {
        var logger = Logger(label: "test.audit-service")
        logger.logLevel = ProcessInfo.processInfo.environment["RESCIND_TEST_LOG_LEVEL"].flatMap { Logger.Level(rawValue: $0) } ?? .warning
        return logger
    }

    /// A configuration for tests: fast group membership and scans, a fresh schema, prefix and key file.
    public static func configuration(
        cluster: DevelopmentCluster, grantKey: Ed25519.PublicKey?, topicPrefix: String? = nil
    ) -> AuditServiceConfiguration {
        let suffix = UUID().uuidString.prefix(8).lowercased()
        var configuration = AuditServiceConfiguration()
        configuration.http.port = 0
        configuration.database.url = GrantServiceHarness.databaseURL
        configuration.database.schema = "audit_test_\(suffix)"
        configuration.database.poolSize = 4
        configuration.database.migrationsDirectory =
            GrantServiceHarness.repositoryRoot.appendingPathComponent("migrations/audit").path
        configuration.kafka.bootstrapServers = cluster.bootstrapServers
        configuration.kafka.topicPrefix = topicPrefix ?? "a\(suffix)."
        configuration.kafka.consumerGroup = "audit-\(suffix)"
        configuration.kafka.sessionTimeout = .seconds(3)
        configuration.kafka.heartbeatInterval = .milliseconds(300)
        let fast = ["reconnect.backoff.ms": "50", "reconnect.backoff.max.ms": "300", "topic.metadata.refresh.interval.ms": "1000"]
        configuration.kafka.consumerProperties = fast.merging(["fetch.wait.max.ms": "50", "fetch.error.backoff.ms": "50"]) { $1 }
        configuration.kafka.producerProperties = fast.merging(["linger.ms": "2"]) { $1 }
        configuration.grantService.publicKey = grantKey.map { Data($0.rawRepresentation).base64EncodedString() }
        configuration.tracking.scanInterval = .milliseconds(100)
        configuration.notifications.pollInterval = .milliseconds(200)
        configuration.signingKeyFile = FileManager.default.temporaryDirectory
            .appendingPathComponent("rescind-audit-test-\(suffix)/audit.key").path
        configuration.createSigningKeyIfMissing = true
        return configuration
    }

    /// Creates the topics (2 partitions each) and starts the service.
    public static func start(configuration: AuditServiceConfiguration, cluster: DevelopmentCluster) async throws -> AuditServiceHarness {
        for topic in Topic.allCases {
            try await cluster.createTopic(name: configuration.kafka.topicPrefix + topic.rawValue, partitions: partitions)
        }
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let app = try await AuditServiceApplication.build(configuration: configuration, logger: logger) { port in
            portContinuation.yield(port)
        }
        let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
        let task = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw HarnessError.serverDidNotStart }
        let keyData = try Data(contentsOf: URL(fileURLWithPath: configuration.signingKeyFile))
        var seed = [UInt8](keyData)
        return AuditServiceHarness(
            configuration: configuration, cluster: cluster, baseURL: URL(string: "http://127.0.0.1:\(port)")!,
            auditKey: try Ed25519.PrivateKey(seed: &seed).publicKey, group: group, task: task)
    }

    /// Runs `body` against an audit service that reads `grant`'s cluster and topics and fetches
    /// its key from its URL; always stops it and drops its state.
    public static func with<Result>(
        auditing grant: GrantServiceHarness,
        _ adjust: (inout AuditServiceConfiguration) -> Void = { _ in },
        _ body: (AuditServiceHarness) async throws -> Result
    ) async throws -> Result {
        var configuration = configuration(cluster: grant.cluster, grantKey: nil, topicPrefix: grant.topicPrefix)
        configuration.grantService.url = grant.baseURL.absoluteString
        adjust(&configuration)
        let audit = try await start(configuration: configuration, cluster: grant.cluster)
        do {
            let result = try await body(audit)
            await audit.stop()
            await audit.dropState()
            return result
        } catch {
            await audit.stop()
            await audit.dropState()
            throw error
        }
    }

    /// Graceful shutdown (SIGTERM's path); the schema and topics stay.
    public func stop() async {
        await group.triggerGracefulShutdown()
        _ = try? await task.value
    }

    /// Drops the schema and the key file.
    public func dropState() async {
        _ = try? await withConnection { try await $0.execute("DROP SCHEMA IF EXISTS \(identifier: schema) CASCADE") }
        try? FileManager.default.removeItem(
            at: URL(fileURLWithPath: configuration.signingKeyFile).deletingLastPathComponent())
    }

    @discardableResult
    public func withConnection<Result>(_ body: (PostgresConnection) async throws -> Result) async throws -> Result {
        var database = try PostgresConfiguration(url: configuration.database.url)
        database.searchPath = [schema]
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
}
