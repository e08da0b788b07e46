import Foundation
import Logging
import RescindClient
import RescindCrypto
import RescindDevKit
import RescindKafka
import RescindPostgres
import RescindProtocol
import RescindTLS
import Synchronization

/// What a chaos run runs on, all of it its own: a PostgreSQL cluster (`ThrowawayPostgres`, so
/// that a postmaster SIGKILL never reaches the shared stack), the development Kafka cluster in
/// this process (three brokers, every partition replicated on all three, leaders spread; its
/// fault API), two grant services and two audit services as processes on one schema each, and
/// the device agents as `rescind-dev agent` processes. Every process it starts dies with it
/// (`ChildProcess`'s `exitsWithParent`), however it ends.
final class ChaosStack: Sendable {
    static let partitions: Int32 = 4
    static let brokers = 3
    static let auditGroup = "chaos-audit"
    static let clientTLS = ClientTLS(plainHTTP: .loopback)
    static let grantSchema = "chaos_grant"
    static let auditSchema = "chaos_audit"

    let work: URL
    let postgres: ThrowawayPostgres
    let cluster: DevelopmentCluster
    let topicPrefix: String
    /// The leader of each partition of each topic (full topic name → leader by partition), as the
    /// run placed or moved it (`moveLeaders`).
    let leaders: Mutex<[String: [Int32]]>
    /// The coordinator of each consumer group the run pinned (`pinCoordinators`).
    let coordinators = Mutex<[String: Int32]>([:])
    let grantURLs: [URL]
    let auditURLs: [URL]
    let grantKey: Ed25519.PublicKey
    let auditKey: Ed25519.PublicKey
    let operatorTokenFile: URL
    let ackDeadlineSeconds: Int
    let grants: [ChaosProcess]
    let audits: [ChaosProcess]
    /// The agents, in the order the workload enrols them.
    let agents = Mutex<[ChaosProcess]>([])
    let binaries: URL
    let log: @Sendable (String) -> Void

    private init(
        work: URL, postgres: ThrowawayPostgres, cluster: DevelopmentCluster, topicPrefix: String,
        leaders: [String: [Int32]], grantURLs: [URL],
        auditURLs: [URL], grantKey: Ed25519.PublicKey, auditKey: Ed25519.PublicKey, operatorTokenFile: URL,
        ackDeadlineSeconds: Int, grants: [ChaosProcess], audits: [ChaosProcess], binaries: URL,
        log: @escaping @Sendable (String) -> Void
    ) {
        self.work = work
        self.postgres = postgres
        self.cluster = cluster
        self.topicPrefix = topicPrefix
        self.leaders = Mutex(leaders)
        self.grantURLs = grantURLs
        self.auditURLs = auditURLs
        self.grantKey = grantKey
        self.auditKey = auditKey
        self.operatorTokenFile = operatorTokenFile
        self.ackDeadlineSeconds = ackDeadlineSeconds
        self.grants = grants
        self.audits = audits
        self.binaries = binaries
        self.log = log
    }

    static func start(
        repository: URL, work: URL, ackDeadlineSeconds: Int, log: @escaping @Sendable (String) -> Void
    ) async throws -> ChaosStack {
        let binaries = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        for program in ["rescind-grant-service", "rescind-audit-service", "rescind-admin"] {
            guard FileManager.default.isExecutableFile(atPath: binaries.appendingPathComponent(program).path) else {
                throw CLIError("\(program) is not built next to rescind-dev (swift build)")
            }
        }
        guard let pgBinaries = ThrowawayPostgres.findBinaries() else {
            throw CLIError("no PostgreSQL server programs (initdb): install postgresql or set RESCIND_PG_BIN")
        }
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        let pgPort = try FreePort.next()
        log("PostgreSQL: a cluster of its own on 127.0.0.1:\(pgPort) (initdb in a temporary directory)")
        let postgres = try await ThrowawayPostgres.start(port: pgPort, binaries: pgBinaries)
        log("PostgreSQL's directory: \(postgres.directory.path)")
        let cluster: DevelopmentCluster
        do {
            cluster = try DevelopmentCluster(brokers: brokers)
        } catch {
            await postgres.stop()
            postgres.remove()
            throw error
        }
        let topicPrefix = "chaos."
        var grants: [ChaosProcess] = []
        var audits: [ChaosProcess] = []
        var leaders: [String: [Int32]] = [:]
        do {
            // Every partition on every broker; leaders spread as a controller places them
            // (partition p on broker p mod 3 + 1), so that one broker down leaves partitions of
            // every topic leaderless until they move (`leader_down`).
            for topic in Topic.allCases {
                let name = topicPrefix + topic.rawValue
                _ = try await cluster.createTopic(name: name, partitions: partitions, replicationFactor: Int16(brokers))
                var byPartition: [Int32] = []
                for partition in 0..<partitions {
                    let leader = Int32(Int(partition) % brokers) + 1
                    try await cluster.setPartitionLeader(topic: name, partition: partition, brokerID: leader)
                    byPartition.append(leader)
                }
                leaders[name] = byPartition
            }
            log("Kafka: the development cluster in this process (librdkafka \(DevelopmentCluster.librdkafkaVersion)), \(brokers) brokers at \(cluster.bootstrapServers), topics \(topicPrefix)*")
            let keys = work.appendingPathComponent("keys")
            try FileManager.default.createDirectory(at: keys, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let grantKey = try writeSigningKey(keys.appendingPathComponent("grant.key"))
            let auditKey = try writeSigningKey(keys.appendingPathComponent("audit.key"))
            let tokenFile = keys.appendingPathComponent("operator.token")
            let token = try await ChildProcess.run(binaries.appendingPathComponent("rescind-admin"), ["keys", "token", tokenFile.path])
            guard token.status == 0 else { throw CLIError("rescind-admin keys token failed: \(token.output)") }
            let common = [
                "PATH": "/usr/bin:/bin", "RESCIND_DATABASE_URL": postgres.url,
                "RESCIND_KAFKA_BOOTSTRAP_SERVERS": cluster.bootstrapServers, "RESCIND_TOPIC_PREFIX": topicPrefix,
                "RESCIND_LOG_LEVEL": "info", "RESCIND_KAFKA_FETCH_WAIT_MS": "50",
            ].merging(ProcessInfo.processInfo.environment.filter { $0.key == "LD_LIBRARY_PATH" }) { $1 }
            let logs = work.appendingPathComponent("logs")
            try FileManager.default.createDirectory(at: logs, withIntermediateDirectories: true)
            var grantURLs: [URL] = []
            for index in 0..<2 {
                let port = try FreePort.next()
                let url = URL(string: "http://127.0.0.1:\(port)")!
                grantURLs.append(url)
                let environment = common.merging([
                    "RESCIND_GRANT_HOST": "127.0.0.1", "RESCIND_GRANT_PORT": "\(port)",
                    "RESCIND_GRANT_DB_SCHEMA": grantSchema,
                    "RESCIND_GRANT_MIGRATIONS_DIR": repository.appendingPathComponent("migrations/grant").path,
                    "RESCIND_GRANT_SIGNING_KEY_FILE": keys.appendingPathComponent("grant.key").path,
                    "RESCIND_OUTBOX_POLL_MS": "200",
                    // A killed relay's claim passes to the survivor quickly.
                    "RESCIND_OUTBOX_CLAIM_LEASE_SECONDS": "5",
                ]) { $1 }
                // One at a time: the second finds the schema migrated.
                let process = ChaosProcess(
                    name: "grant-\(index)", executable: binaries.appendingPathComponent("rescind-grant-service"),
                    arguments: [], environment: environment, logs: logs, readyURL: url.appendingPathComponent("ready"))
                try await process.start()
                grants.append(process)
            }
            var auditURLs: [URL] = []
            for index in 0..<2 {
                let port = try FreePort.next()
                let url = URL(string: "http://127.0.0.1:\(port)")!
                auditURLs.append(url)
                let environment = common.merging([
                    "RESCIND_AUDIT_HOST": "127.0.0.1", "RESCIND_AUDIT_PORT": "\(port)",
                    "RESCIND_AUDIT_DB_SCHEMA": auditSchema,
                    "RESCIND_AUDIT_MIGRATIONS_DIR": repository.appendingPathComponent("migrations/audit").path,
                    "RESCIND_AUDIT_CONSUMER_GROUP": auditGroup,
                    "RESCIND_AUDIT_SIGNING_KEY_FILE": keys.appendingPathComponent("audit.key").path,
                    "RESCIND_AUDIT_OPERATOR_TOKEN_FILE": tokenFile.path,
                    "RESCIND_GRANT_SERVICE_PUBLIC_KEY": Data(grantKey.rawRepresentation).base64EncodedString(),
                    // Owners' bearer tokens (the access log) are confirmed with the grant service.
                    "RESCIND_GRANT_SERVICE_URL": grantURLs[index].absoluteString, "RESCIND_ALLOW_PLAIN_HTTP": "loopback",
                    "RESCIND_AUDIT_ACK_DEADLINE_SECONDS": "\(ackDeadlineSeconds)",
                    "RESCIND_AUDIT_REISSUE_BACKOFF_SECONDS": "10",
                    "RESCIND_AUDIT_KAFKA_SESSION_TIMEOUT_MS": "6000", "RESCIND_AUDIT_KAFKA_HEARTBEAT_MS": "1000",
                    "RESCIND_AUDIT_OUTBOX_POLL_MS": "200", "RESCIND_AUDIT_OUTBOX_CLAIM_LEASE_SECONDS": "5",
                    "RESCIND_AUDIT_SCAN_INTERVAL_MS": "500",
                ]) { $1 }
                let process = ChaosProcess(
                    name: "audit-\(index)", executable: binaries.appendingPathComponent("rescind-audit-service"),
                    arguments: [], environment: environment, logs: logs, readyURL: url.appendingPathComponent("ready"))
                try await process.start()
                audits.append(process)
            }
            log("services: grant \(grantURLs.map(\.absoluteString).joined(separator: " ")), audit \(auditURLs.map(\.absoluteString).joined(separator: " "))")
            return ChaosStack(
                work: work, postgres: postgres, cluster: cluster, topicPrefix: topicPrefix, leaders: leaders, grantURLs: grantURLs,
                auditURLs: auditURLs, grantKey: grantKey, auditKey: auditKey, operatorTokenFile: tokenFile,
                ackDeadlineSeconds: ackDeadlineSeconds, grants: grants, audits: audits, binaries: binaries, log: log)
        } catch {
            for process in grants + audits { await process.stop() }
            cluster.shutdown()
            await postgres.stop()
            postgres.remove()
            throw error
        }
    }

    /// Stops every process, the broker and PostgreSQL; removes the cluster's directory unless
    /// `keepDatabase` (it is named then, for a look after a failed run).
    func stop(keepDatabase: Bool = false) async {
        for process in agents.withLock({ $0 }) { await process.stop() }
        for process in grants + audits { await process.stop() }
        cluster.shutdown()
        await postgres.stop()
        if keepDatabase {
            log("PostgreSQL's data kept in \(postgres.directory.path)/data")
        } else {
            postgres.remove()
        }
    }

    /// The environment of an agent process (`rescind-dev agent`, as `rescind-agent run`).
    func agentEnvironment(dataDirectory: URL, keyFile: URL, grantIndex: Int) -> [String: String] {
        [
            "PATH": "/usr/bin:/bin",
            "RESCIND_AGENT_DATA_DIR": dataDirectory.path,
            "RESCIND_AGENT_KEY_FILE": keyFile.path,
            "RESCIND_AGENT_GRANT_SERVICE_URL": grantURLs[grantIndex].absoluteString,
            "RESCIND_AGENT_GRANT_SERVICE_KEY": Data(grantKey.rawRepresentation).base64EncodedString(),
            "RESCIND_AGENT_AUDIT_SERVICE_KEY": Data(auditKey.rawRepresentation).base64EncodedString(),
            "RESCIND_AGENT_ALLOW_PLAIN_HTTP": "loopback",
            "RESCIND_KAFKA_BOOTSTRAP_SERVERS": cluster.bootstrapServers,
            "RESCIND_KAFKA_FETCH_WAIT_MS": "50",
            "RESCIND_TOPIC_PREFIX": topicPrefix,
            "RESCIND_AGENT_SELF_HEAL_SECONDS": "5",
            "RESCIND_AGENT_RETRY_SECONDS": "1",
            "RESCIND_AGENT_KAFKA_SESSION_TIMEOUT_SECONDS": "6",
            "RESCIND_AGENT_LOG_LEVEL": "info",
        ].merging(ProcessInfo.processInfo.environment.filter { $0.key == "LD_LIBRARY_PATH" }) { $1 }
    }

    // MARK: Database

    /// A direct connection to one of the two schemas (retried while PostgreSQL restarts).
    func withConnection<Result>(schema: String, _ body: (PostgresConnection) async throws -> Result) async throws -> Result {
        var database = try PostgresConfiguration(url: postgres.url)
        database.searchPath = [schema]
        var attempt = 0
        while true {
            attempt += 1
            let connection: PostgresConnection
            do {
                connection = try await PostgresConnection.connect(configuration: database, logger: Logger(label: "rescind.chaos"))
            } catch {
                if attempt >= 100 { throw error }
                try await Task.sleep(for: .milliseconds(200))
                continue
            }
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

    func count(schema: String, _ query: PostgresQuery) async throws -> Int {
        try await withConnection(schema: schema) { try await $0.query(query).first!.decode(Int.self, column: 0) }
    }

    // MARK: Kafka

    /// Moves the leadership of every partition `broker` leads to the live brokers (in turn), as a
    /// controller does when a broker dies; returns the partitions moved as `(topic, partition)`.
    func moveLeaders(from broker: Int32, to live: [Int32]) async throws -> [(String, Int32)] {
        let led = leaders.withLock { leaders in
            leaders.flatMap { topic, byPartition in
                byPartition.indices.filter { byPartition[$0] == broker }.map { (topic, Int32($0)) }
            }
        }.sorted { ($0.0, $0.1) < ($1.0, $1.1) }
        for (index, (topic, partition)) in led.enumerated() {
            try await moveLeader(topic: topic, partition: partition, to: live[index % live.count])
        }
        return led
    }

    /// Moves one partition's leadership (and records it).
    func moveLeader(topic: String, partition: Int32, to broker: Int32) async throws {
        try await cluster.setPartitionLeader(topic: topic, partition: partition, brokerID: broker)
        leaders.withLock { $0[topic]?[Int(partition)] = broker }
    }

    /// Places the coordinators of these consumer groups on the brokers in turn (the mock would
    /// otherwise keep each on a broker chosen by hash, even while that broker is down).
    func pinCoordinators(groups: [String]) async throws {
        for (index, group) in groups.enumerated() {
            try await moveCoordinator(group: group, to: Int32(index % Self.brokers) + 1)
        }
    }

    /// Moves every group `broker` coordinates to the live brokers in turn; returns the groups moved.
    func moveCoordinators(from broker: Int32, to live: [Int32]) async throws -> [String] {
        let groups = coordinators.withLock { $0.filter { $0.value == broker }.map(\.key) }.sorted()
        for (index, group) in groups.enumerated() { try await moveCoordinator(group: group, to: live[index % live.count]) }
        return groups
    }

    func moveCoordinator(group: String, to broker: Int32) async throws {
        try await cluster.setGroupCoordinator(group: group, brokerID: broker)
        coordinators.withLock { $0[group] = broker }
    }

    /// Every message of a topic so far (all partitions from the beginning), read until the
    /// topic has been quiet for `quiet`.
    func messages(_ topic: Topic, quiet: Duration = .seconds(3)) async throws -> [KafkaMessage] {
        let consumer = try KafkaConsumer(
            configuration: KafkaConsumerConfiguration(bootstrapServers: cluster.bootstrapServers, clientID: "chaos-reader"),
            subscription: .partitions(
                (0..<Self.partitions).map {
                    KafkaPartitionAssignment(topic: topicPrefix + topic.rawValue, partition: $0, start: .beginning)
                }),
            logger: Logger(label: "rescind.chaos"))
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
        await consumer.close()
        return received.withLock { $0 }
    }

    // MARK: Helpers

    static func writeSigningKey(_ file: URL) throws -> Ed25519.PublicKey {
        var seed = SecureRandom.bytes(count: Ed25519.seedByteCount)
        guard FileManager.default.createFile(atPath: file.path, contents: Data(seed), attributes: [.posixPermissions: 0o600]) else {
            throw CLIError("cannot write \(file.path)")
        }
        return try Ed25519.PrivateKey(seed: &seed).publicKey
    }
}
