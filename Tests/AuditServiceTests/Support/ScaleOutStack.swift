import Foundation
import RescindClient
import RescindCrypto
import RescindDevKit
import RescindKafka
import RescindPostgres
import RescindProtocol
import RescindTLS
import RescindTestSupport
import Synchronization
import Testing

/// Two grant services and two audit services as their own processes (the executables built
/// next to the tests), each pair on one PostgreSQL schema, one signing key and one consumer
/// group, all on one development cluster in this process: the scale-out the README promises,
/// with processes a test can kill with SIGKILL.
final class ScaleOutStack: Sendable {
    static let partitions: Int32 = 4
    static let clientTLS = ClientTLS(plainHTTP: .loopback)

    let cluster: DevelopmentCluster
    let topicPrefix: String
    let grantSchema: String
    let auditSchema: String
    let work: URL
    let grantURLs: [URL]
    let auditURLs: [URL]
    private let grantEnvironments: [[String: String]]
    private let auditEnvironments: [[String: String]]
    /// The running processes, by index; a restarted one replaces its predecessor.
    private let grants: Mutex<[ChildProcess]>
    private let audits: Mutex<[ChildProcess]>
    let grantKey: Ed25519.PublicKey

    private init(
        cluster: DevelopmentCluster, topicPrefix: String, grantSchema: String, auditSchema: String, work: URL,
        grantURLs: [URL], auditURLs: [URL], grantEnvironments: [[String: String]], auditEnvironments: [[String: String]],
        grants: [ChildProcess], audits: [ChildProcess], grantKey: Ed25519.PublicKey
    ) {
        self.cluster = cluster
        self.topicPrefix = topicPrefix
        self.grantSchema = grantSchema
        self.auditSchema = auditSchema
        self.work = work
        self.grantURLs = grantURLs
        self.auditURLs = auditURLs
        self.grantEnvironments = grantEnvironments
        self.auditEnvironments = auditEnvironments
        self.grants = Mutex(grants)
        self.audits = Mutex(audits)
        self.grantKey = grantKey
    }

    static var binaries: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    }

    /// Starts everything, runs `body`, and always stops and removes everything.
    static func with<Result>(_ body: (ScaleOutStack) async throws -> Result) async throws -> Result {
        let stack = try await start()
        do {
            let result = try await body(stack)
            await stack.stop()
            return result
        } catch {
            Issue.record("logs:\n\(stack.logTails())")
            await stack.stop()
            throw error
        }
    }

    private static func start() async throws -> ScaleOutStack {
        for program in ["rescind-grant-service", "rescind-audit-service"] {
            try #require(
                FileManager.default.isExecutableFile(atPath: binaries.appendingPathComponent(program).path),
                "\(program) is not built next to the tests")
        }
        let suffix = UUID().uuidString.prefix(8).lowercased()
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("rescind-scaleout-\(suffix)")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        let cluster = try DevelopmentCluster()
        let prefix = "s\(suffix)."
        for topic in Topic.allCases {
            _ = try await cluster.createTopic(name: prefix + topic.rawValue, partitions: partitions)
        }
        let common = [
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
            "RESCIND_DATABASE_URL": GrantServiceHarness.databaseURL,
            "RESCIND_KAFKA_BOOTSTRAP_SERVERS": cluster.bootstrapServers,
            "RESCIND_TOPIC_PREFIX": prefix,
            "RESCIND_LOG_LEVEL": "info",
        ]
        let grantSchema = "grant_scaleout_\(suffix)"
        let auditSchema = "audit_scaleout_\(suffix)"
        let root = GrantServiceHarness.repositoryRoot
        let grantPorts = [try FreePort.next(), try FreePort.next()]
        let grantEnvironments = grantPorts.map { port in
            common.merging([
                "RESCIND_GRANT_HOST": "127.0.0.1",
                "RESCIND_GRANT_PORT": "\(port)",
                "RESCIND_GRANT_DB_SCHEMA": grantSchema,
                "RESCIND_GRANT_MIGRATIONS_DIR": root.appendingPathComponent("migrations/grant").path,
                "RESCIND_GRANT_SIGNING_KEY_FILE": work.appendingPathComponent("grant.key").path,
                "RESCIND_GRANT_CREATE_SIGNING_KEY": "true",
                "RESCIND_OUTBOX_POLL_MS": "200",
                // A killed relay's claim passes to the survivor quickly.
                "RESCIND_OUTBOX_CLAIM_LEASE_SECONDS": "5",
            ]) { $1 }
        }
        let grantURLs = grantPorts.map { URL(string: "http://127.0.0.1:\($0)")! }
        var grants: [ChildProcess] = []
        var audits: [ChildProcess] = []
        do {
            // One at a time: the second finds the schema migrated and the signing key created.
            for index in 0..<2 {
                grants.append(try await launch("grant-\(index)-0", "rescind-grant-service", grantEnvironments[index], grantURLs[index], work))
            }
            let grantKey = try Ed25519.PublicKey(
                rawRepresentation: [UInt8](
                    try await GrantServiceClient(baseURL: grantURLs[0], tls: clientTLS).serviceKey().signingPublicKey))
            let auditPorts = [try FreePort.next(), try FreePort.next()]
            let auditEnvironments = auditPorts.map { port in
                common.merging([
                    "RESCIND_AUDIT_HOST": "127.0.0.1",
                    "RESCIND_AUDIT_PORT": "\(port)",
                    "RESCIND_AUDIT_DB_SCHEMA": auditSchema,
                    "RESCIND_AUDIT_MIGRATIONS_DIR": root.appendingPathComponent("migrations/audit").path,
                    "RESCIND_AUDIT_CONSUMER_GROUP": "audit-scaleout-\(suffix)",
                    "RESCIND_AUDIT_SIGNING_KEY_FILE": work.appendingPathComponent("audit.key").path,
                    "RESCIND_AUDIT_CREATE_SIGNING_KEY": "true",
                    "RESCIND_GRANT_SERVICE_PUBLIC_KEY": Data(grantKey.rawRepresentation).base64EncodedString(),
                    "RESCIND_AUDIT_KAFKA_SESSION_TIMEOUT_MS": "3000",
                    "RESCIND_AUDIT_KAFKA_HEARTBEAT_MS": "300",
                    "RESCIND_KAFKA_FETCH_WAIT_MS": "50",
                    "RESCIND_AUDIT_OUTBOX_POLL_MS": "200",
                    "RESCIND_AUDIT_OUTBOX_CLAIM_LEASE_SECONDS": "5",
                    "RESCIND_AUDIT_SCAN_INTERVAL_MS": "200",
                ]) { $1 }
            }
            let auditURLs = auditPorts.map { URL(string: "http://127.0.0.1:\($0)")! }
            for index in 0..<2 {
                audits.append(try await launch("audit-\(index)-0", "rescind-audit-service", auditEnvironments[index], auditURLs[index], work))
            }
            return ScaleOutStack(
                cluster: cluster, topicPrefix: prefix, grantSchema: grantSchema, auditSchema: auditSchema, work: work,
                grantURLs: grantURLs, auditURLs: auditURLs, grantEnvironments: grantEnvironments,
                auditEnvironments: auditEnvironments, grants: grants, audits: audits, grantKey: grantKey)
        } catch {
            for child in grants + audits {
                Issue.record("\(child.name):\n\(child.logTail(lines: 30))")
                await child.stop()
            }
            await TestDatabase.dropSchema(grantSchema)
            await TestDatabase.dropSchema(auditSchema)
            cluster.shutdown()
            try? FileManager.default.removeItem(at: work)
            throw error
        }
    }

    private static func launch(
        _ name: String, _ program: String, _ environment: [String: String], _ url: URL, _ work: URL
    ) async throws -> ChildProcess {
        let child = try ChildProcess(
            name: name, executable: binaries.appendingPathComponent(program), environment: environment,
            output: .file(work.appendingPathComponent("\(name).log")))
        let deadline = ContinuousClock.now + .seconds(90)
        while ContinuousClock.now < deadline, child.isRunning {
            if let answer = try? await TestHTTP.send("GET", url.appendingPathComponent("ready"), tls: clientTLS, timeout: .seconds(2)),
                answer.status == 200
            {
                return child
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        let tail = child.logTail(lines: 30)
        await child.stop()
        throw HarnessError.unexpected("\(name) did not become ready:\n\(tail)")
    }

    /// SIGKILL: no graceful shutdown, no flush, no offset commit.
    func killGrant(_ index: Int) async {
        let child = grants.withLock { $0[index] }
        child.signal(SIGKILL)
        _ = await child.exited()
    }

    func killAudit(_ index: Int) async {
        let child = audits.withLock { $0[index] }
        child.signal(SIGKILL)
        _ = await child.exited()
    }

    /// Starts a new audit service in the place of `index` (same port, schema, key, group).
    func restartAudit(_ index: Int, generation: Int) async throws {
        let child = try await Self.launch(
            "audit-\(index)-\(generation)", "rescind-audit-service", auditEnvironments[index], auditURLs[index], work)
        audits.withLock { $0[index] = child }
    }

    func stop() async {
        for child in grants.withLock({ $0 }) + audits.withLock({ $0 }) { await child.stop() }
        await TestDatabase.dropSchema(grantSchema)
        await TestDatabase.dropSchema(auditSchema)
        cluster.shutdown()
        try? FileManager.default.removeItem(at: work)
    }

    func logTails() -> String {
        (grants.withLock { $0 } + audits.withLock { $0 }).map { "== \($0.name)\n\($0.logTail(lines: 20))" }
            .joined(separator: "\n")
    }

    /// A direct connection to one of the two schemas.
    func withConnection<Result>(schema: String, _ body: (PostgresConnection) async throws -> Result) async throws -> Result {
        var database = try PostgresConfiguration(url: GrantServiceHarness.databaseURL)
        database.searchPath = [schema]
        let connection = try await PostgresConnection.connect(configuration: database, logger: AuditServiceHarness.logger)
        do {
            let result = try await body(connection)
            await connection.close()
            return result
        } catch {
            await connection.close()
            throw error
        }
    }

    func count(schema: String, _ query: PostgresQuery) async throws -> Int {
        try await withConnection(schema: schema) { try await $0.query(query).first!.decode(Int.self, column: 0) }
    }

    /// Every message on a topic so far (all partitions from the beginning), read until the
    /// topic has been quiet for `quiet`.
    func messages(_ topic: Topic, quiet: Duration = .seconds(3)) async throws -> [KafkaMessage] {
        let consumer = try KafkaConsumer(
            configuration: KafkaConsumerConfiguration(bootstrapServers: cluster.bootstrapServers, clientID: "test-reader"),
            subscription: .partitions(
                (0..<Self.partitions).map {
                    KafkaPartitionAssignment(topic: topicPrefix + topic.rawValue, partition: $0, start: .beginning)
                }),
            logger: AuditServiceHarness.logger)
        defer { Task { await consumer.close() } }
        let received = Mutex<[KafkaMessage]>([])
        let reader = Task {
            for try await message in consumer.messages { received.withLock { $0.append(message) } }
        }
        var last = -1
        while true {
            try await Task.sleep(for: quiet)
            let now = received.withLock { $0.count }
            if now == last { break }
            last = now
        }
        reader.cancel()
        return received.withLock { $0 }
    }
}
