import Foundation
import Logging
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import RescindClient
import RescindCrypto
import RescindDevKit
import RescindKafka
import RescindPostgres
import RescindProtocol
import RescindTLS

/// The system under test, started fresh for one bench run: a development Kafka cluster in
/// this process (librdkafka's mock broker on loopback TCP, topics created with 4
/// partitions), and the grant service and the audit service as their own processes (the dev
/// kit's `ServiceProcesses`), on their own PostgreSQL schemas and topic prefix. Everything is
/// removed by `stop()`.
struct BenchStack: Sendable {
    static let partitions: Int32 = 4
    static let outboxTopic = "bench_outbox"
    static let rawProducerTopic = "bench_raw_producer"

    let cluster: DevelopmentCluster
    /// The two services, their schemas, topic prefix, URLs and keys.
    let services: ServiceProcesses
    /// The benchmarks run the services on plain HTTP over loopback, as their baselines were
    /// measured (docs/benchmarks.md); TLS is the tests' and the demo's default.
    static let clientTLS = ClientTLS(plainHTTP: .loopback)
    /// Connects to the grant service's schema (for seeding and checks).
    let database: PostgresConfiguration
    let workDirectory: URL
    let logger: Logger

    /// Where everything runs: `cluster`, or the external broker of `--kafka-bootstrap-servers`.
    var bootstrapServers: String { services.configuration.bootstrapServers }
    var topicPrefix: String { services.configuration.topicPrefix }
    var grantURL: URL { services.grantURLs[0] }
    var serviceKey: Ed25519.PublicKey { services.grantKey }
    /// The running services (started by `start`, so never nil here).
    var grant: ChildProcess { services.grants[0].child! }
    var audit: ChildProcess { services.audits[0].child! }

    func topic(_ topic: Topic) -> String { topicPrefix + topic.rawValue }

    /// - Parameter environment: added to both services' environment (the tracing section's endpoint).
    static func start(options: BenchOptions, environment: [String: String] = [:], logger: Logger) async throws -> BenchStack {
        let suffix = UUID().uuidString.prefix(8).lowercased()
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("rescind-bench-\(suffix)")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        let cluster = try DevelopmentCluster()
        let prefix = "bench\(suffix)."
        let names = (Topic.allCases.map(\.rawValue) + [outboxTopic, rawProducerTopic]).map { prefix + $0 }
        let configuration = ServiceProcesses.Configuration(
            repository: URL(fileURLWithPath: options.repositoryRoot), binaries: try executableDirectory(), work: work,
            databaseURL: options.databaseURL, bootstrapServers: options.kafkaBootstrapServers ?? cluster.bootstrapServers,
            topicPrefix: prefix, grantSchema: "bench_grant_\(suffix)", auditSchema: "bench_audit_\(suffix)",
            auditGroup: "bench-audit-\(suffix)", logLevel: "warning",
            grantEnvironment: (options.outboxBatch.map { ["RESCIND_OUTBOX_BATCH_SIZE": "\($0)"] } ?? [:])
                .merging(options.grantEnvironment) { $1 }.merging(environment) { $1 },
            auditEnvironment: ["RESCIND_KAFKA_FETCH_WAIT_MS": "\(options.fetchWaitMilliseconds)"].merging(environment) { $1 })
        do {
            if let external = options.kafkaBootstrapServers {
                // Provisioned as `rescind-admin migrate kafka` does: an independent broker creates nothing by itself.
                let admin = try KafkaAdmin(bootstrapServers: external, clientID: "rescind-bench", logger: logger)
                let report = try await TopicProvisioning(
                    topics: names.map { KafkaTopic(name: $0, partitions: partitions, replicationFactor: 1) }
                ).run(with: admin)
                guard report.isClean else { throw BenchError("the bench topics on \(external) do not match: \(report)") }
            } else {
                for name in names {
                    try await cluster.createTopic(name: name, partitions: partitions)
                }
            }
            // A failed start stops whatever it had started: no service outlives it.
            let services = try await ServiceProcesses.start(configuration)
            var database = try PostgresConfiguration(url: options.databaseURL)
            database.searchPath = [configuration.grantSchema]
            database.applicationName = "rescind-bench"
            return BenchStack(cluster: cluster, services: services, database: database, workDirectory: work, logger: logger)
        } catch {
            try? await TestDatabases.dropSchemas([configuration.grantSchema, configuration.auditSchema], url: configuration.databaseURL)
            cluster.shutdown()
            try? FileManager.default.removeItem(at: work)
            throw error
        }
    }

    func stop() async {
        await services.stop()
        await services.dropSchemas()
        cluster.shutdown()
        try? FileManager.default.removeItem(at: workDirectory)
    }

    /// A connection to the grant service's schema, closed after `body`.
    @discardableResult
    func withConnection<Result>(_ body: (PostgresConnection) async throws -> Result) async throws -> Result {
        try await TestDatabases.withConnection(to: database, body)
    }

    /// Registers a user whose first device has the given identity (so an agent can run it).
    func register(_ name: String, deviceID: UUID = UUID(), deviceKey: Ed25519.PrivateKey = Ed25519.PrivateKey()) async throws -> UserSession {
        try await UserSession.register(
            keys: .generate(), displayName: name, deviceID: deviceID, deviceName: "\(name)'s device", deviceKey: deviceKey,
            baseURL: grantURL, tls: Self.clientTLS)
    }

    /// Where the bench itself was started from: the other executables are built next to it.
    static func executableDirectory() throws -> URL {
        let path = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        return URL(fileURLWithPath: path).deletingLastPathComponent()
    }
}
