import Foundation
import Logging
import RescindClient
import RescindCrypto
import RescindKafka
import RescindProtocol
import RescindTestSupport
import Synchronization
import Testing
import RescindTLS

@testable import DeviceAgent

/// Helpers of the agent's integration tests: agents enrolled as a new device of a user
/// registered with a real grant service, run against that service's Kafka cluster.
enum AgentTestKit {
    static let passphrase = "agent test passphrase"

    static var logger: Logger { .forTests("test.agent") }

    /// Fast settings for the mock broker and cheap Argon2id.
    static func configuration(_ service: GrantServiceHarness, dataDirectory: String, topicPrefix: String? = nil) -> AgentConfiguration {
        var configuration = AgentConfiguration(
            dataDirectory: dataDirectory, grantServiceURL: service.baseURL, grantServiceKey: service.serviceKey,
            kafka: .init(bootstrapServers: service.bootstrapServers, topicPrefix: topicPrefix ?? service.topicPrefix),
            unlock: .passphrase(passphrase))
        configuration.tls = service.clientTLS
        configuration.keyDerivation = .init(opsLimit: 1, memLimit: 8 << 20)
        configuration.kafka.sessionTimeout = .seconds(3)
        let common = ["reconnect.backoff.ms": "50", "reconnect.backoff.max.ms": "300", "topic.metadata.refresh.interval.ms": "1000"]
        configuration.kafka.consumerProperties = common.merging(["fetch.wait.max.ms": "50", "fetch.error.backoff.ms": "50"]) { $1 }
        configuration.kafka.producerProperties = common.merging(["linger.ms": "2"]) { $1 }
        configuration.selfHealInterval = .seconds(60)
        configuration.retryInterval = .milliseconds(200)
        return configuration
    }

    /// A new device of `user`, enrolled in a fresh data directory.
    struct Device {
        let directory: TemporaryDirectory
        let configuration: AgentConfiguration
        let deviceID: UUID
        let deviceKey: Ed25519.PrivateKey
        /// The user acting through this very device (same credentials as the agent).
        let session: UserSession

        var dataDirectory: String { configuration.dataDirectory }

        func open(
            faults: AgentFaults = AgentFaults(), topicPrefix: String? = nil,
            reporter: (any KeyChainViolationReporting)? = nil,
            configure: (inout AgentConfiguration) -> Void = { _ in }
        ) async throws -> DeviceAgent {
            var configuration = configuration
            if let topicPrefix { configuration.kafka.topicPrefix = topicPrefix }
            configure(&configuration)
            return try await DeviceAgent(
                configuration: configuration, logger: AgentTestKit.logger, faults: faults, violationReporter: reporter)
        }
    }

    static func enrol(_ user: UserSession, on service: GrantServiceHarness, name: String = "agent") async throws -> Device {
        let directory = try TemporaryDirectory()
        let deviceKey = Ed25519.PrivateKey()
        let session = try await user.addDevice(name: name, deviceKey: deviceKey)
        let configuration = configuration(service, dataDirectory: directory.file("data"))
        try await AgentEnrolment.install(
            userKeys: user.keys, deviceID: session.deviceID, deviceKey: deviceKey, configuration: configuration)
        return Device(directory: directory, configuration: configuration, deviceID: session.deviceID, deviceKey: deviceKey, session: session)
    }

    /// A family member owned by `owner` whose FMK v1 has bytes the test knows, with records.
    static func familyMember(
        ownedBy owner: UserSession, records plaintexts: [String]
    ) async throws -> (id: UUID, rawFMK: [UInt8], records: [UUID: [UInt8]]) {
        let id = UUID()
        var bytes = SecureRandom.bytes(count: 32)
        let raw = bytes
        let fmk = try SecretKey(bytes: &bytes)
        _ = try await owner.createFamilyMember(id: id, fmk: fmk)
        var records: [UUID: [UInt8]] = [:]
        for text in plaintexts {
            let plaintext = Array(text.utf8)
            records[try await owner.putRecord(id, plaintext: plaintext, fmk: fmk, version: 1)] = plaintext
        }
        return (id, raw, records)
    }

    /// Polls `condition` until it holds or `timeout` passes.
    static func eventually(
        _ what: String, timeout: Duration = .seconds(20), _ condition: () async throws -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try await condition() { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("timed out waiting for \(what)")
        throw HarnessError.timedOut(what)
    }

    /// Every message of a topic, read from the beginning: until `enough` holds for what was
    /// read (at most `timeout`; without `enough`, at once), then for `duration` more, so that
    /// a message that should not be there has time to show.
    static func allMessages(
        _ service: GrantServiceHarness, _ topic: Topic, for duration: Duration = .seconds(2),
        until enough: (@Sendable ([KafkaMessage]) -> Bool)? = nil, timeout: Duration = .seconds(60)
    ) async throws -> [KafkaMessage] {
        let consumer = try KafkaConsumer(
            configuration: KafkaConsumerConfiguration(bootstrapServers: service.bootstrapServers, clientID: "test-reader"),
            subscription: .partitions(
                (0..<GrantServiceHarness.partitions).map {
                    KafkaPartitionAssignment(topic: service.topicPrefix + topic.rawValue, partition: $0, start: .beginning)
                }),
            logger: logger)
        let received = Mutex<[KafkaMessage]>([])
        let collector = Task {
            do { for try await message in consumer.messages { received.withLock { $0.append(message) } } } catch {}
        }
        if let enough {
            let deadline = ContinuousClock.now + timeout
            while !enough(received.withLock { $0 }), ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        try await Task.sleep(for: duration)
        await consumer.close()
        await collector.value
        return received.withLock { $0 }
    }

    /// The acks a device published, verified against its key.
    /// Reads until `atLeast` of them arrived (the wait is on that state, not on a time), then
    /// `duration` more.
    static func acks(
        _ service: GrantServiceHarness, from device: Device, for duration: Duration = .seconds(2), atLeast: Int = 0
    ) async throws -> [DeviceAck] {
        let key = Data(device.deviceID.uuidString.lowercased().utf8)
        let answer: @Sendable (KafkaMessage) -> Bool = { $0.key == key && !isReceipt($0.value) }
        return try await allMessages(service, .deviceAcks, for: duration, until: { $0.filter(answer).count >= atLeast })
            .filter(answer)
            .map { message in
                let signed = try SignedMessage<DeviceAck>.verified(
                    from: message.value ?? Data(), schema: DeviceAck.schema, key: device.deviceKey.publicKey)
                #expect(signed.signer == "device:\(device.deviceID.uuidString.lowercased())")
                return signed.payload
            }
    }

    /// Whether a `device_acks` message is a receipt signed by a receipt key (it carries a certificate).
    static func isReceipt(_ value: Data?) -> Bool {
        guard let value, let envelope = try? SignedMessage<DeviceAck>.decode(value, schema: DeviceAck.schema) else { return false }
        return envelope.payload.receiptCertificate != nil
    }

    /// Publishes raw bytes on the commands topic, keyed as given.
    static func publishCommand(_ service: GrantServiceHarness, key: UUID, value: Data) async throws {
        try await publish(service, .deviceCommands, key: key, values: [value])
    }

    /// Publishes raw bytes on `topic`, keyed as given (what a writer on the topic can do).
    static func publish(_ service: GrantServiceHarness, _ topic: Topic, key: UUID, values: [Data]) async throws {
        let producer = try KafkaProducer(
            configuration: KafkaProducerConfiguration(bootstrapServers: service.bootstrapServers, clientID: "test-forger"),
            logger: logger)
        for value in values {
            _ = try await producer.send(
                topic: service.topicPrefix + topic.rawValue, key: Data(key.uuidString.lowercased().utf8), value: value)
        }
        await producer.shutdown()
    }

    /// The grant service's own signing key (the harness keeps its seed in a file), to make
    /// genuinely signed commands that are misaddressed or stale.
    static func serviceSigningKey(_ service: GrantServiceHarness) throws -> Ed25519.PrivateKey {
        var seed = [UInt8](try Data(contentsOf: URL(fileURLWithPath: service.configuration.signingKeyFile)))
        return try Ed25519.PrivateKey(seed: &seed)
    }
}

/// An agent running its service group in a task, stopped by cancellation (as a crash or a
/// supervisor would) or left to fail on its own.
final class RunningAgent: Sendable {
    let agent: DeviceAgent
    let task: Task<Void, any Error>

    init(_ agent: DeviceAgent) {
        self.agent = agent
        task = Task { try await agent.run(gracefulShutdownSignals: [], lockSignals: false) }
    }

    /// Cancels and waits; returns the error the agent ended with, if any.
    @discardableResult
    func stop() async -> (any Error)? {
        task.cancel()
        do {
            try await task.value
            return nil
        } catch {
            return error
        }
    }

    /// Waits for the agent to end by itself (e.g. an injected crash) and returns its error.
    func ended(timeout: Duration = .seconds(20)) async -> (any Error)? {
        let task = self.task
        let outcome = await withTaskGroup(of: Result<Void, any Error>?.self) { group in
            group.addTask { await task.result }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        guard let outcome else {
            Issue.record("the agent did not stop by itself")
            return await stop()
        }
        if case .failure(let error) = outcome { return error }
        return nil
    }
}
