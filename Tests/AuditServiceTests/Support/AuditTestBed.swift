import AuditService
import Foundation
import Logging
import RescindCrypto
import RescindDevKit
import RescindKafka
import RescindPostgres
import RescindProtocol
import RescindTestSupport
import Synchronization
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A running audit service plus what a test needs around it: a stand-in grant-service
/// key that signs events, a producer for the input topics, a reader of the
/// notifications, and direct SQL.
final class AuditTestBed: Sendable {
    let cluster: DevelopmentCluster
    let grantKey: Ed25519.PrivateKey
    let configuration: AuditServiceConfiguration
    let producer: KafkaProducer
    private let current: Mutex<AuditServiceHarness>

    var service: AuditServiceHarness { current.withLock { $0 } }
    var topicPrefix: String { configuration.kafka.topicPrefix }
    var operatorToken: String { service.operatorToken }

    private init(cluster: DevelopmentCluster, grantKey: Ed25519.PrivateKey, configuration: AuditServiceConfiguration,
                 producer: KafkaProducer, service: AuditServiceHarness) {
        self.cluster = cluster
        self.grantKey = grantKey
        self.configuration = configuration
        self.producer = producer
        self.current = Mutex(service)
    }

    /// Runs `body` against a fresh service and always tears everything down.
    /// - Parameter plainHTTP: serve plain HTTP (tests that speak raw HTTP over a socket);
    ///   HTTPS with the suite's CA otherwise.
    /// - Parameter grantKey: the stand-in grant service's key (one drawn from a seed makes
    ///   what it signs reproducible).
    static func with<Result>(
        plainHTTP: Bool = false,
        grantKey: Ed25519.PrivateKey = Ed25519.PrivateKey(),
        _ adjust: (inout AuditServiceConfiguration) -> Void = { _ in },
        _ body: (AuditTestBed) async throws -> Result
    ) async throws -> Result {
        let cluster = try DevelopmentCluster()
        var configuration = AuditServiceHarness.configuration(cluster: cluster, grantKey: grantKey.publicKey)
        adjust(&configuration)
        let service = try await AuditServiceHarness.start(configuration: configuration, cluster: cluster, plainHTTP: plainHTTP)
        let producer = try KafkaProducer(
            configuration: KafkaProducerConfiguration(
                bootstrapServers: configuration.kafka.bootstrapServers, clientID: "test-publisher", linger: .milliseconds(2)),
            logger: AuditServiceHarness.logger)
        let bed = AuditTestBed(
            cluster: cluster, grantKey: grantKey, configuration: configuration, producer: producer, service: service)
        do {
            let result = try await body(bed)
            await bed.tearDown()
            return result
        } catch {
            await bed.tearDown()
            throw error
        }
    }

    private func tearDown() async {
        await service.stop()
        await producer.shutdown()
        await service.dropState()
        cluster.shutdown()
    }

    /// Stops the service gracefully and starts a new one on the same schema, topics and group.
    func restart() async throws {
        await service.stop()
        let next = try await AuditServiceHarness.start(configuration: configuration, cluster: cluster)
        current.withLock { $0 = next }
    }

    // MARK: Publishing

    func publish(_ event: RevocationEvent, signer: Ed25519.PrivateKey? = nil) async throws {
        let message = try SignedMessage(
            schema: RevocationEvent.schema, signer: "grant-service", payload: event, key: signer ?? grantKey)
        try await publishRaw(.revocationEvents, key: event.familyMemberID, value: try message.encoded())
    }

    func publish(_ event: AccessEvent, signer: Ed25519.PrivateKey? = nil) async throws {
        let message = try SignedMessage(
            schema: AccessEvent.schema, signer: "grant-service", payload: event, key: signer ?? grantKey)
        try await publishRaw(.accessEvents, key: event.familyMemberID, value: try message.encoded())
    }

    /// A governance notice as the grant service publishes its audit copy: on `access_events`, keyed by user.
    func publish(_ notice: GovernanceNotice, signer: Ed25519.PrivateKey? = nil) async throws {
        let message = try SignedMessage(
            schema: GovernanceNotice.schema, signer: "grant-service", payload: notice, key: signer ?? grantKey)
        try await publishRaw(.accessEvents, key: notice.userID, value: try message.encoded())
    }

    func publish(_ ack: DeviceAck, signedBy key: Ed25519.PrivateKey, signer: String? = nil) async throws {
        let message = try SignedMessage(
            schema: DeviceAck.schema, signer: signer ?? "device:\(ack.deviceID.uuidString.lowercased())", payload: ack,
            key: key)
        try await publishRaw(.deviceAcks, key: ack.deviceID, value: try message.encoded())
    }

    func publishRaw(_ topic: Topic, key: UUID?, value: Data?) async throws {
        _ = try await producer.send(
            topic: topicPrefix + topic.rawValue, key: key.map { Data($0.uuidString.lowercased().utf8) }, value: value)
    }

    // MARK: Reading

    /// The first `count` notifications on `audit_notifications`, each verified with the audit key.
    func notifications(count: Int, timeout: Duration = .seconds(20)) async throws -> [AuditNotification] {
        try await Self.notifications(
            count: count, bootstrapServers: configuration.kafka.bootstrapServers, topicPrefix: topicPrefix,
            auditKey: service.auditKey, timeout: timeout)
    }

    static func notifications(
        count: Int, bootstrapServers: String, topicPrefix: String, auditKey: Ed25519.PublicKey,
        timeout: Duration = .seconds(20)
    ) async throws -> [AuditNotification] {
        let consumer = try KafkaConsumer(
            configuration: KafkaConsumerConfiguration(bootstrapServers: bootstrapServers, clientID: "test-reader"),
            subscription: .partitions(
                (0..<AuditServiceHarness.partitions).map {
                    KafkaPartitionAssignment(topic: topicPrefix + Topic.auditNotifications.rawValue, partition: $0, start: .beginning)
                }),
            logger: AuditServiceHarness.logger)
        defer { Task { await consumer.close() } }
        return try await withDeadline(timeout, "\(count) notification(s)") {
            var received: [AuditNotification] = []
            for try await message in consumer.messages {
                let verified = try SignedMessage<AuditNotification>.verified(
                    from: message.value ?? Data(), schema: AuditNotification.schema, key: auditKey)
                #expect(verified.signer == AuditNotification.signer)
                #expect(message.key == verified.payload.familyMemberID.map { Data($0.uuidString.lowercased().utf8) })
                received.append(verified.payload)
                if received.count == count { break }
            }
            return received
        }
    }

    /// Waits until `condition` holds, polling.
    func eventually(
        _ what: String, timeout: Duration = .seconds(20), _ condition: () async throws -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + timeout
        while try await !condition() {
            guard ContinuousClock.now < deadline else { throw HarnessError.timedOut(what) }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    @discardableResult
    func withConnection<Result>(_ body: (PostgresConnection) async throws -> Result) async throws -> Result {
        try await service.withConnection(body)
    }

    func count(_ sql: String) async throws -> Int {
        try await withConnection { try await $0.query(PostgresQuery(unsafeSQL: sql)).first!.decode(Int.self, column: 0) }
    }

    /// The state of each expected device of a revocation.
    func deviceStates(_ eventID: UUID) async throws -> [UUID: String] {
        try await withConnection { connection in
            Dictionary(
                uniqueKeysWithValues: try await connection.query(
                    "SELECT device_id, state FROM revocation_devices WHERE event_id = \(eventID)"
                ).map { try $0.decode(UUID.self, String.self) })
        }
    }

    // MARK: HTTP

    func get(_ path: String, token: String? = nil) async throws -> (status: Int, body: Data) {
        let answer = try await TestHTTP.send(
            "GET", URL(string: path, relativeTo: service.baseURL)!.absoluteURL,
            headers: token.map { [("Authorization", "Bearer \($0)")] } ?? [])
        return (answer.status, answer.body)
    }

    static func withDeadline<T: Sendable>(
        _ timeout: Duration, _ what: String, _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        try await withThrowingTaskGroup(of: T.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw HarnessError.timedOut(what)
            }
            let first = try await group.next()!
            group.cancelAll()
            return first
        }
    }
}
