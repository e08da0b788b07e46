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
/// fault API), two grant services and two audit services as processes on one schema each (the
/// dev kit's `ServiceProcesses`), and the device agents as `rescind-dev agent` processes. Every
/// process it starts dies with it (`ChildProcess`'s `exitsWithParent`), however it ends.
final class ChaosStack: Sendable {
    static let partitions: Int32 = 4
    static let brokers = 3
    static let auditGroup = "chaos-audit"
    static let clientTLS = ClientTLS(plainHTTP: .loopback)
    static let grantSchema = "chaos_grant"
    static let auditSchema = "chaos_audit"
    static let topicPrefix = "chaos."

    let work: URL
    let postgres: ThrowawayPostgres
    let cluster: DevelopmentCluster
    /// The grant and audit services, their URLs and keys.
    let services: ServiceProcesses
    /// The leader of each partition of each topic (full topic name → leader by partition), as the
    /// run placed or moved it (`moveLeaders`).
    let leaders: Mutex<[String: [Int32]]>
    /// The coordinator of each consumer group the run pinned (`pinCoordinators`).
    let coordinators = Mutex<[String: Int32]>([:])
    let ackDeadlineSeconds: Int
    /// The agents, in the order the workload enrols them.
    let agents = Mutex<[RestartableProcess]>([])
    let binaries: URL
    let log: @Sendable (String) -> Void

    var topicPrefix: String { Self.topicPrefix }

    private init(
        work: URL, postgres: ThrowawayPostgres, cluster: DevelopmentCluster, services: ServiceProcesses,
        leaders: [String: [Int32]], ackDeadlineSeconds: Int, binaries: URL, log: @escaping @Sendable (String) -> Void
    ) {
        self.work = work
        self.postgres = postgres
        self.cluster = cluster
        self.services = services
        self.leaders = Mutex(leaders)
        self.ackDeadlineSeconds = ackDeadlineSeconds
        self.binaries = binaries
        self.log = log
    }

    static func start(
        repository: URL, work: URL, ackDeadlineSeconds: Int, log: @escaping @Sendable (String) -> Void
    ) async throws -> ChaosStack {
        let binaries = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        guard let pgBinaries = ThrowawayPostgres.findBinaries() else {
            throw CLIError("no PostgreSQL server programs (initdb): install postgresql or set RESCIND_PG_BIN")
        }
        try OwnedDirectory.create(work)
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
            let services = try await ServiceProcesses.start(
                .init(
                    repository: repository, binaries: binaries, work: work, databaseURL: postgres.url,
                    bootstrapServers: cluster.bootstrapServers, topicPrefix: topicPrefix, grantSchema: grantSchema,
                    auditSchema: auditSchema, auditGroup: auditGroup, grants: 2, audits: 2,
                    common: ["RESCIND_KAFKA_FETCH_WAIT_MS": "50"],
                    grantEnvironment: [
                        "RESCIND_OUTBOX_POLL_MS": "200",
                        // A killed relay's claim passes to the survivor quickly.
                        "RESCIND_OUTBOX_CLAIM_LEASE_SECONDS": "5",
                    ],
                    auditEnvironment: [
                        "RESCIND_AUDIT_ACK_DEADLINE_SECONDS": "\(ackDeadlineSeconds)",
                        "RESCIND_AUDIT_REISSUE_BACKOFF_SECONDS": "10",
                        "RESCIND_AUDIT_KAFKA_SESSION_TIMEOUT_MS": "6000", "RESCIND_AUDIT_KAFKA_HEARTBEAT_MS": "1000",
                        "RESCIND_AUDIT_OUTBOX_POLL_MS": "200", "RESCIND_AUDIT_OUTBOX_CLAIM_LEASE_SECONDS": "5",
                        "RESCIND_AUDIT_SCAN_INTERVAL_MS": "500",
                    ],
                    operatorToken: true))
            log("services: grant \(services.grantURLs.map(\.absoluteString).joined(separator: " ")), audit \(services.auditURLs.map(\.absoluteString).joined(separator: " "))")
            return ChaosStack(
                work: work, postgres: postgres, cluster: cluster, services: services, leaders: leaders,
                ackDeadlineSeconds: ackDeadlineSeconds, binaries: binaries, log: log)
        } catch {
            cluster.shutdown()
            await postgres.stop()
            postgres.remove()
            throw error
        }
    }

    /// Stops every process, the broker and PostgreSQL; removes the cluster's directory unless
    /// `keepDatabase` (it is named then, for a look after a failed run, and no later run's sweep
    /// removes it).
    func stop(keepDatabase: Bool = false) async {
        for process in agents.withLock({ $0 }) { await process.stop() }
        await services.stop()
        cluster.shutdown()
        await postgres.stop()
        if keepDatabase {
            OwnedDirectory.keep(postgres.directory)
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
            "RESCIND_AGENT_GRANT_SERVICE_URL": services.grantURLs[grantIndex].absoluteString,
            "RESCIND_AGENT_GRANT_SERVICE_KEY": Data(services.grantKey.rawRepresentation).base64EncodedString(),
            "RESCIND_AGENT_AUDIT_SERVICE_KEY": Data(services.auditKey.rawRepresentation).base64EncodedString(),
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
    @discardableResult
    func withConnection<Result>(schema: String, _ body: (PostgresConnection) async throws -> Result) async throws -> Result {
        try await services.withConnection(schema: schema, attempts: 100, body)
    }

    func count(schema: String, _ query: PostgresQuery) async throws -> Int {
        try await services.count(schema: schema, attempts: 100, query)
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
}
