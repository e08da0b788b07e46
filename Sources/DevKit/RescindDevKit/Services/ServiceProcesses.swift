import Foundation
import Logging
import RescindCrypto
import RescindKafka
import RescindPostgres
import RescindProtocol
import Synchronization

/// DEVELOPMENT AND TESTS ONLY: grant services and audit services as their own processes (the
/// executables built next to the caller), each kind on one PostgreSQL schema and one signing key
/// that this launcher writes, the audit services in one consumer group: what the scale-out test,
/// the chaos run and the benchmarks run their system on. Each process is a `RestartableProcess`,
/// so a fault run can kill one and start it again in its place.
///
/// The caller owns the broker and the database; `stop()` stops the processes, `dropSchemas()`
/// removes the two schemas, and the caller removes `Configuration.work`.
public final class ServiceProcesses: Sendable {
    /// Where and how the services run. Every service gets the common part of its environment
    /// from here; `grantEnvironment` and `auditEnvironment` add to (or override) it.
    public struct Configuration: Sendable {
        /// Holds `migrations/grant` and `migrations/audit`.
        public var repository: URL
        /// Where `rescind-grant-service`, `rescind-audit-service` and `rescind-admin` are built.
        public var binaries: URL
        /// Keys (`keys/`) and logs (`logs/`); created if missing, removed by the caller.
        public var work: URL
        public var databaseURL: String
        public var bootstrapServers: String
        public var topicPrefix: String
        public var grantSchema: String
        public var auditSchema: String
        public var auditGroup: String
        public var grants: Int
        public var audits: Int
        /// `RESCIND_LOG_LEVEL` of every service.
        public var logLevel: String
        /// Added to every service's environment (after `PATH` and, when set here, `LD_LIBRARY_PATH`).
        public var common: [String: String]
        public var grantEnvironment: [String: String]
        public var auditEnvironment: [String: String]
        /// Gives the audit services an operator token file (`rescind-admin keys token`).
        public var operatorToken: Bool

        public init(
            repository: URL, binaries: URL, work: URL, databaseURL: String, bootstrapServers: String, topicPrefix: String,
            grantSchema: String, auditSchema: String, auditGroup: String, grants: Int = 1, audits: Int = 1,
            logLevel: String = "info", common: [String: String] = [:], grantEnvironment: [String: String] = [:],
            auditEnvironment: [String: String] = [:], operatorToken: Bool = false
        ) {
            self.repository = repository
            self.binaries = binaries
            self.work = work
            self.databaseURL = databaseURL
            self.bootstrapServers = bootstrapServers
            self.topicPrefix = topicPrefix
            self.grantSchema = grantSchema
            self.auditSchema = auditSchema
            self.auditGroup = auditGroup
            self.grants = grants
            self.audits = audits
            self.logLevel = logLevel
            self.common = common
            self.grantEnvironment = grantEnvironment
            self.auditEnvironment = auditEnvironment
            self.operatorToken = operatorToken
        }
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public let configuration: Configuration
    public let grantURLs: [URL]
    public let auditURLs: [URL]
    public let grantKey: Ed25519.PublicKey
    public let auditKey: Ed25519.PublicKey
    /// The audit services' operator token file, when `Configuration.operatorToken`.
    public let operatorTokenFile: URL?
    public let grants: [RestartableProcess]
    public let audits: [RestartableProcess]

    private init(
        configuration: Configuration, grantURLs: [URL], auditURLs: [URL], grantKey: Ed25519.PublicKey,
        auditKey: Ed25519.PublicKey, operatorTokenFile: URL?, grants: [RestartableProcess], audits: [RestartableProcess]
    ) {
        self.configuration = configuration
        self.grantURLs = grantURLs
        self.auditURLs = auditURLs
        self.grantKey = grantKey
        self.auditKey = auditKey
        self.operatorTokenFile = operatorTokenFile
        self.grants = grants
        self.audits = audits
    }

    /// Writes the signing keys, starts the grant services one at a time (the second finds the
    /// schema migrated), then the audit services, each waited for until ready. A failed start
    /// stops whatever it had started.
    public static func start(_ configuration: Configuration) async throws -> ServiceProcesses {
        let programs = ["rescind-grant-service", "rescind-audit-service"] + (configuration.operatorToken ? ["rescind-admin"] : [])
        for program in programs {
            guard FileManager.default.isExecutableFile(atPath: configuration.binaries.appendingPathComponent(program).path) else {
                throw Failure(description: "\(program) is not built in \(configuration.binaries.path) (swift build)")
            }
        }
        let keys = configuration.work.appendingPathComponent("keys")
        let logs = configuration.work.appendingPathComponent("logs")
        try FileManager.default.createDirectory(at: keys, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try FileManager.default.createDirectory(at: logs, withIntermediateDirectories: true)
        let grantKeyFile = keys.appendingPathComponent("grant.key")
        let auditKeyFile = keys.appendingPathComponent("audit.key")
        let grantKey = try writeSigningKey(grantKeyFile)
        let auditKey = try writeSigningKey(auditKeyFile)
        var operatorTokenFile: URL?
        if configuration.operatorToken {
            let file = keys.appendingPathComponent("operator.token")
            let token = try await ChildProcess.run(configuration.binaries.appendingPathComponent("rescind-admin"), ["keys", "token", file.path])
            guard token.status == 0 else { throw Failure(description: "rescind-admin keys token failed: \(token.output)") }
            operatorTokenFile = file
        }

        var common = ["PATH": "/usr/bin:/bin"]
        // The librdkafka a broker needs (Tansu, the chaos run: a newer one) reaches the services too.
        if let library = ProcessInfo.processInfo.environment["LD_LIBRARY_PATH"] { common["LD_LIBRARY_PATH"] = library }
        common.merge([
            "RESCIND_DATABASE_URL": configuration.databaseURL,
            "RESCIND_KAFKA_BOOTSTRAP_SERVERS": configuration.bootstrapServers,
            "RESCIND_TOPIC_PREFIX": configuration.topicPrefix,
            "RESCIND_LOG_LEVEL": configuration.logLevel,
        ]) { $1 }
        common.merge(configuration.common) { $1 }

        let grantURLs = try (0..<configuration.grants).map { _ in URL(string: "http://127.0.0.1:\(try FreePort.next())")! }
        let auditURLs = try (0..<configuration.audits).map { _ in URL(string: "http://127.0.0.1:\(try FreePort.next())")! }
        let grants = grantURLs.enumerated().map { index, url in
            RestartableProcess(
                name: "grant-\(index)", executable: configuration.binaries.appendingPathComponent("rescind-grant-service"),
                environment: common.merging([
                    "RESCIND_GRANT_HOST": "127.0.0.1", "RESCIND_GRANT_PORT": "\(url.port!)",
                    "RESCIND_GRANT_DB_SCHEMA": configuration.grantSchema,
                    "RESCIND_GRANT_MIGRATIONS_DIR": configuration.repository.appendingPathComponent("migrations/grant").path,
                    "RESCIND_GRANT_SIGNING_KEY_FILE": grantKeyFile.path,
                ].merging(configuration.grantEnvironment) { $1 }) { $1 },
                logs: logs, readyURL: url.appendingPathComponent("ready"))
        }
        let audits = auditURLs.enumerated().map { index, url in
            var environment = [
                "RESCIND_AUDIT_HOST": "127.0.0.1", "RESCIND_AUDIT_PORT": "\(url.port!)",
                "RESCIND_AUDIT_DB_SCHEMA": configuration.auditSchema,
                "RESCIND_AUDIT_MIGRATIONS_DIR": configuration.repository.appendingPathComponent("migrations/audit").path,
                "RESCIND_AUDIT_CONSUMER_GROUP": configuration.auditGroup,
                "RESCIND_AUDIT_SIGNING_KEY_FILE": auditKeyFile.path,
                "RESCIND_GRANT_SERVICE_PUBLIC_KEY": Data(grantKey.rawRepresentation).base64EncodedString(),
                // Owners' bearer tokens (the access log) are confirmed with a grant service.
                "RESCIND_GRANT_SERVICE_URL": grantURLs[index % grantURLs.count].absoluteString,
                "RESCIND_ALLOW_PLAIN_HTTP": "loopback",
            ]
            if let operatorTokenFile { environment["RESCIND_AUDIT_OPERATOR_TOKEN_FILE"] = operatorTokenFile.path }
            return RestartableProcess(
                name: "audit-\(index)", executable: configuration.binaries.appendingPathComponent("rescind-audit-service"),
                environment: common.merging(environment.merging(configuration.auditEnvironment) { $1 }) { $1 },
                logs: logs, readyURL: url.appendingPathComponent("ready"))
        }
        do {
            // One at a time: the second of a kind finds its schema migrated.
            for process in grants + audits { try await process.start() }
        } catch {
            for process in grants + audits { await process.stop() }
            throw error
        }
        return ServiceProcesses(
            configuration: configuration, grantURLs: grantURLs, auditURLs: auditURLs, grantKey: grantKey, auditKey: auditKey,
            operatorTokenFile: operatorTokenFile, grants: grants, audits: audits)
    }

    /// Stops every service (SIGTERM, SIGKILL after `grace`).
    public func stop(grace: Duration = .seconds(10)) async {
        for process in grants + audits { await process.stop(grace: grace) }
    }

    /// Drops both schemas (the services' tables and rows); for a shared database after `stop()`.
    public func dropSchemas() async {
        try? await TestDatabases.dropSchemas([configuration.grantSchema, configuration.auditSchema], url: configuration.databaseURL)
    }

    /// The last lines of every service's log, each under its name.
    public func logTails(lines: Int = 20) -> String {
        (grants + audits).map { "== \($0.name)\n\($0.logTail(lines: lines))" }.joined(separator: "\n")
    }

    // MARK: Database

    /// One connection to `schema` for `body`, closed whatever happens; `attempts` > 1 tries a
    /// refused connection again every 200 ms (a PostgreSQL restarting after a kill).
    @discardableResult
    public func withConnection<Result>(
        schema: String, attempts: Int = 1, _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        var database = try PostgresConfiguration(url: configuration.databaseURL)
        database.searchPath = [schema]
        return try await TestDatabases.withConnection(to: database, attempts: attempts, body)
    }

    /// The `Int` in the first column of the first row of `query`.
    public func count(schema: String, attempts: Int = 1, _ query: PostgresQuery) async throws -> Int {
        try await withConnection(schema: schema, attempts: attempts) { try await $0.query(query).first!.decode(Int.self, column: 0) }
    }

    // MARK: Kafka

    /// Every message on these topics so far (`partitions` each, from the beginning), by topic,
    /// read by one consumer until all of them have been quiet for `quiet` together.
    public func messages(_ topics: [Topic], partitions: Int32, quiet: Duration = .seconds(3)) async throws -> [Topic: [KafkaMessage]] {
        let prefix = configuration.topicPrefix
        let consumer = try KafkaConsumer(
            configuration: KafkaConsumerConfiguration(bootstrapServers: configuration.bootstrapServers, clientID: "rescind-devkit-reader"),
            subscription: .partitions(
                topics.flatMap { topic in
                    (0..<partitions).map { KafkaPartitionAssignment(topic: prefix + topic.rawValue, partition: $0, start: .beginning) }
                }),
            logger: Logger(label: "rescind.devkit.reader"))
        let received = Mutex<[KafkaMessage]>([])
        let reader = Task {
            for try await message in consumer.messages { received.withLock { $0.append(message) } }
        }
        var last = -1
        do {
            while true {
                try await Task.sleep(for: quiet)
                let now = received.withLock { $0.count }
                if now == last { break }
                last = now
            }
        } catch {
            reader.cancel()
            await consumer.close()
            throw error
        }
        reader.cancel()
        await consumer.close()
        var byTopic: [Topic: [KafkaMessage]] = [:]
        for message in received.withLock({ $0 }) {
            guard let topic = topics.first(where: { prefix + $0.rawValue == message.topic }) else { continue }
            byTopic[topic, default: []].append(message)
        }
        return byTopic
    }

    // MARK: Keys

    /// A fresh Ed25519 seed in `file` (0600), as `RESCIND_*_SIGNING_KEY_FILE` reads it.
    static func writeSigningKey(_ file: URL) throws -> Ed25519.PublicKey {
        var seed = SecureRandom.bytes(count: Ed25519.seedByteCount)
        guard FileManager.default.createFile(atPath: file.path, contents: Data(seed), attributes: [.posixPermissions: 0o600]) else {
            throw Failure(description: "cannot write \(file.path)")
        }
        return try Ed25519.PrivateKey(seed: &seed).publicKey
    }
}
