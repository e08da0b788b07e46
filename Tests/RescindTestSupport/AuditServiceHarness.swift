import AuditService
import Foundation
import Logging
import RescindCrypto
import RescindDevKit
import RescindKafka
import RescindPostgres
import RescindTLS

/// A real audit service for one test: its own PostgreSQL schema, topics behind a unique
/// prefix on an in-process Kafka cluster (librdkafka's mock broker over TCP), a free
/// loopback port. It can be stopped gracefully and started again on the same schema,
/// cluster and consumer group (restart tests). To audit a `GrantServiceHarness`, pass its
/// cluster and topic prefix, and its URL or key (see `with(auditing:)`). It serves HTTPS with the
/// suite's CA (`TestTLS`) and trusts that CA for the grant service, unless the configuration
/// given to `start` already says otherwise.
public final class AuditServiceHarness: Sendable {
    public static let partitions: Int32 = 2

    public let configuration: AuditServiceConfiguration
    public let cluster: DevelopmentCluster
    public let baseURL: URL
    public let auditKey: Ed25519.PublicKey
    /// How a client reaches it: the suite's CA, or plain HTTP to loopback when it serves plain.
    public let clientTLS: ClientTLS
    private let running: ServiceUnderTest

    public var topicPrefix: String { configuration.kafka.topicPrefix }
    public var schema: String { configuration.database.schema }

    private init(
        configuration: AuditServiceConfiguration, cluster: DevelopmentCluster, auditKey: Ed25519.PublicKey,
        clientTLS: ClientTLS, running: ServiceUnderTest
    ) {
        self.configuration = configuration
        self.clientTLS = clientTLS
        self.cluster = cluster
        self.baseURL = running.baseURL
        self.auditKey = auditKey
        self.running = running
    }

    public static var logger: Logger { .forTests("test.audit-service") }

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
        configuration.kafka.bootstrapServers = ServiceUnderTest.externalKafka ?? cluster.bootstrapServers
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
        configuration.monitoring.operatorTokenFile = writeOperatorToken(
            beside: configuration.signingKeyFile, suffix: String(suffix))
        return configuration
    }

    /// Writes a fresh operator token (0600) next to the signing key, in the directory
    /// `dropState()` removes.
    static func writeOperatorToken(beside signingKeyFile: String, suffix: String) -> String {
        let directory = (signingKeyFile as NSString).deletingLastPathComponent
        try? FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let path = (directory as NSString).appendingPathComponent("operator.token")
        let token = "operator-\(suffix)-" + Data(SecureRandom.bytes(count: 24)).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        guard FileManager.default.createFile(atPath: path, contents: Data((token + "\n").utf8), attributes: [.posixPermissions: 0o600])
        else { fatalError("the operator token file \(path) could not be written") }
        return path
    }

    /// The operator's bearer token (from the configured token file).
    public var operatorToken: String {
        guard let path = configuration.monitoring.operatorTokenFile,
            let data = FileManager.default.contents(atPath: path)
        else { return "" }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Creates the topics (2 partitions each) and starts the service.
    /// Serves HTTPS with the suite's CA unless `plainHTTP`; trusts that CA for the grant service
    /// unless the configuration names a CA file of its own.
    public static func start(
        configuration: AuditServiceConfiguration, cluster: DevelopmentCluster, plainHTTP: Bool = false
    ) async throws -> AuditServiceHarness {
        let tls = try await TestTLS.shared()
        var configuration = configuration
        if !plainHTTP && configuration.http.tls == nil { configuration.http.tls = tls.server("AUDIT") }
        if configuration.grantService.tls.caFile == nil { configuration.grantService.tls.caFile = tls.caFile }
        try await ServiceUnderTest.createTopics(
            prefix: configuration.kafka.topicPrefix, partitions: partitions,
            bootstrapServers: configuration.kafka.bootstrapServers, on: cluster)
        let serving = configuration.http.tls != nil
        let running = try await ServiceUnderTest.start(logger: logger, tls: serving) { onServerRunning in
            try await AuditServiceApplication.build(configuration: configuration, logger: logger, onServerRunning: onServerRunning)
        }
        return AuditServiceHarness(
            configuration: configuration, cluster: cluster,
            auditKey: try ServiceUnderTest.publicKey(ofSigningKeyFile: configuration.signingKeyFile),
            clientTLS: serving ? tls.client : ClientTLS(plainHTTP: .loopback), running: running)
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
        await running.stop()
    }

    /// Drops the schema and the key file.
    public func dropState() async {
        await TestDatabase.dropSchema(schema)
        ServiceUnderTest.removeSigningKeyDirectory(of: configuration.signingKeyFile)
    }

    @discardableResult
    public func withConnection<Result>(_ body: (PostgresConnection) async throws -> Result) async throws -> Result {
        var database = try PostgresConfiguration(url: configuration.database.url)
        database.searchPath = [schema]
        return try await TestDatabases.withConnection(to: database, body)
    }
}
