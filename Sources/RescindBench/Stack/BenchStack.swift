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
/// partitions), and the grant service and the audit service as their own processes, on
/// their own PostgreSQL schemas and topic prefix. Everything is removed by `stop()`.
struct BenchStack: Sendable {
    static let partitions: Int32 = 4
    static let outboxTopic = "bench_outbox"
    static let rawProducerTopic = "bench_raw_producer"

    let cluster: DevelopmentCluster
    /// Where everything runs: `cluster`, or the external broker of `--kafka-bootstrap-servers`.
    let bootstrapServers: String
    let topicPrefix: String
    let grantSchema: String
    let auditSchema: String
    let grantURL: URL
    /// The benchmarks run the services on plain HTTP over loopback, as their baselines were
    /// measured (BENCHMARKS.md); TLS is the tests' and the demo's default.
    static let clientTLS = ClientTLS(plainHTTP: .loopback)
    let grant: ChildProcess
    let audit: ChildProcess
    let serviceKey: Ed25519.PublicKey
    /// Connects to the grant service's schema (for seeding and checks).
    let database: PostgresConfiguration
    let workDirectory: URL
    let logger: Logger

    func topic(_ topic: Topic) -> String { topicPrefix + topic.rawValue }

    static func start(options: BenchOptions, logger: Logger) async throws -> BenchStack {
        let suffix = UUID().uuidString.prefix(8).lowercased()
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("rescind-bench-\(suffix)")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        let cluster = try DevelopmentCluster()
        let prefix = "bench\(suffix)."
        let names = (Topic.allCases.map(\.rawValue) + [outboxTopic, rawProducerTopic]).map { prefix + $0 }
        if let external = options.kafkaBootstrapServers {
            // Provisioned as `rescind-admin migrate kafka` does: an independent broker creates nothing by itself.
            let admin = try KafkaAdmin(bootstrapServers: external, clientID: "rescind-bench", logger: logger)
            let report = try await TopicProvisioning(
                topics: names.map { KafkaTopicSpec(name: $0, partitions: partitions, replicationFactor: 1) }
            ).run(with: admin)
            guard report.isClean else { throw BenchError("the bench topics on \(external) do not match: \(report)") }
        } else {
            for name in names {
                try await cluster.createTopic(name: name, partitions: partitions)
            }
        }

        // Whatever was started before a failure is stopped again: no service outlives a failed start.
        let children = Locked<[ChildProcess]>([])
        do {
            return try await start(options: options, suffix: String(suffix), work: work, cluster: cluster, logger: logger) {
                child in children.withLock { $0.append(child) }
            }
        } catch {
            for child in children.current { await child.stop() }
            cluster.shutdown()
            try? FileManager.default.removeItem(at: work)
            throw error
        }
    }

    private static func start(
        options: BenchOptions, suffix: String, work: URL, cluster: DevelopmentCluster, logger: Logger,
        started: (ChildProcess) -> Void
    ) async throws -> BenchStack {
        let prefix = "bench\(suffix)."
        let binaries = try executableDirectory()
        let grantPort = try FreePort.next()
        let grantURL = URL(string: "http://127.0.0.1:\(grantPort)")!
        let grantSchema = "bench_grant_\(suffix)"
        let auditSchema = "bench_audit_\(suffix)"
        let bootstrapServers = options.kafkaBootstrapServers ?? cluster.bootstrapServers
        var common = [
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
            "RESCIND_DATABASE_URL": options.databaseURL,
            "RESCIND_KAFKA_BOOTSTRAP_SERVERS": bootstrapServers,
            "RESCIND_TOPIC_PREFIX": prefix,
            "RESCIND_LOG_LEVEL": "warning",
        ]
        // The librdkafka an external broker needs (Tansu: a newer one) reaches the services too.
        if let library = ProcessInfo.processInfo.environment["LD_LIBRARY_PATH"] { common["LD_LIBRARY_PATH"] = library }
        let grant = try ChildProcess(
            name: "grant-service", executable: binaries.appendingPathComponent("rescind-grant-service"),
            environment: common.merging([
                "RESCIND_GRANT_HOST": "127.0.0.1",
                "RESCIND_GRANT_PORT": "\(grantPort)",
                "RESCIND_GRANT_DB_SCHEMA": grantSchema,
                "RESCIND_GRANT_MIGRATIONS_DIR": options.repositoryRoot + "/migrations/grant",
                "RESCIND_GRANT_SIGNING_KEY_FILE": work.appendingPathComponent("grant.key").path,
                "RESCIND_GRANT_CREATE_SIGNING_KEY": "true",
            ].merging(options.outboxBatch.map { ["RESCIND_OUTBOX_BATCH_SIZE": "\($0)"] } ?? [:]) { _, new in new }) { _, new in new },
            logDirectory: work)
        started(grant)
        try await waitUntilReady(grant, url: grantURL)
        let serviceKey = try Ed25519.PublicKey(
            rawRepresentation: [UInt8](try await GrantServiceClient(baseURL: grantURL, tls: Self.clientTLS).serviceKey().signingPublicKey))

        let auditPort = try FreePort.next()
        let audit = try ChildProcess(
            name: "audit-service", executable: binaries.appendingPathComponent("rescind-audit-service"),
            environment: common.merging([
                "RESCIND_AUDIT_HOST": "127.0.0.1",
                "RESCIND_AUDIT_PORT": "\(auditPort)",
                "RESCIND_AUDIT_DB_SCHEMA": auditSchema,
                "RESCIND_AUDIT_MIGRATIONS_DIR": options.repositoryRoot + "/migrations/audit",
                "RESCIND_AUDIT_CONSUMER_GROUP": "bench-audit-\(suffix)",
                "RESCIND_AUDIT_SIGNING_KEY_FILE": work.appendingPathComponent("audit.key").path,
                "RESCIND_AUDIT_CREATE_SIGNING_KEY": "true",
                "RESCIND_GRANT_SERVICE_URL": grantURL.absoluteString,
                "RESCIND_ALLOW_PLAIN_HTTP": "loopback",
                "RESCIND_KAFKA_FETCH_WAIT_MS": "\(options.fetchWaitMilliseconds)",
            ]) { _, new in new },
            logDirectory: work)
        started(audit)
        try await waitUntilReady(audit, url: URL(string: "http://127.0.0.1:\(auditPort)")!)

        var database = try PostgresConfiguration(url: options.databaseURL)
        database.searchPath = [grantSchema]
        database.applicationName = "rescind-bench"
        return BenchStack(
            cluster: cluster, bootstrapServers: bootstrapServers, topicPrefix: prefix, grantSchema: grantSchema, auditSchema: auditSchema, grantURL: grantURL,
            grant: grant, audit: audit, serviceKey: serviceKey, database: database, workDirectory: work, logger: logger)
    }

    func stop() async {
        await grant.stop()
        await audit.stop()
        try? await withConnection { connection in
            try await connection.execute("DROP SCHEMA IF EXISTS \(identifier: grantSchema) CASCADE")
            try await connection.execute("DROP SCHEMA IF EXISTS \(identifier: auditSchema) CASCADE")
        }
        cluster.shutdown()
        try? FileManager.default.removeItem(at: workDirectory)
    }

    /// A connection to the grant service's schema, closed after `body`.
    @discardableResult
    func withConnection<Result>(_ body: (PostgresConnection) async throws -> Result) async throws -> Result {
        let connection = try await PostgresConnection.connect(configuration: database, logger: logger)
        do {
            let result = try await body(connection)
            await connection.close()
            return result
        } catch {
            await connection.close()
            throw error
        }
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

    private static func waitUntilReady(_ process: ChildProcess, url: URL) async throws {
        let ready = url.appendingPathComponent("ready")
        let up = await Timing.wait(timeout: .seconds(90), interval: .milliseconds(100)) {
            guard process.isRunning else { return true }
            guard let (_, response) = try? await URLSession.shared.data(from: ready) else { return false }
            return (response as? HTTPURLResponse)?.statusCode == 200
        }
        guard up, process.isRunning else {
            await process.stop()
            throw BenchError("\(process.name) did not become ready:\n\(process.logTail())")
        }
    }
}
