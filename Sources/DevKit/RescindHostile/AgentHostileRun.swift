import DeviceAgent
import Foundation
import Logging
import RescindClient
import RescindCrypto
import RescindDevKit
import RescindKafka
import RescindProtocol
import RescindTestSupport
import Synchronization

/// The `device_commands` part of `rescind-hostile`: a grant service (its own development
/// cluster and schema) and one enrolled agent running in this process; hostile envelopes
/// keyed to the agent's device are sent in rounds. After each round the run waits until
/// every message is accounted for (refused, or stored and acknowledged), then sends a
/// genuine command signed by the grant service: a stall is one not acknowledged within 5 s.
struct AgentHostileRun {
    let count: Int
    let round: Int
    let seed: UInt64
    let maxStringBytes: Int

    struct Figures {
        var sent = 0, quarantined = 0, applied = 0, stalls = 0, crashes = 0
        var reasons: [String: Int] = [:]
    }

    func run() async throws -> Figures {
        try await GrantServiceHarness.with { service in
            let grantee = try await service.user("Adult B")
            var seedBytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: service.configuration.signingKeyFile)))
            let grantKey = try Ed25519.PrivateKey(seed: &seedBytes)

            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rescind-hostile-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            defer { try? FileManager.default.removeItem(at: directory) }
            var configuration = AgentConfiguration(
                dataDirectory: directory.appendingPathComponent("data").path, grantServiceURL: service.baseURL,
                grantServiceKey: service.serviceKey,
                kafka: .init(bootstrapServers: service.cluster.bootstrapServers, topicPrefix: service.topicPrefix),
                unlock: .passphrase("rescind-hostile"))
            configuration.keyDerivation = .init(opsLimit: 1, memLimit: 8 << 20)
            // The agent reaches the harness's grant service as its tests do: HTTPS checked against
            // the suite's CA (or plain HTTP to loopback when the harness serves plain).
            configuration.tls = service.clientTLS
            configuration.kafka.sessionTimeout = .seconds(3)
            let fast = ["reconnect.backoff.ms": "50", "reconnect.backoff.max.ms": "300", "topic.metadata.refresh.interval.ms": "1000"]
            configuration.kafka.consumerProperties = fast.merging(["fetch.wait.max.ms": "50", "fetch.error.backoff.ms": "50"]) { $1 }
            configuration.kafka.producerProperties = fast.merging(["linger.ms": "2"]) { $1 }
            let deviceKey = Ed25519.PrivateKey()
            let session = try await grantee.addDevice(name: "hostile target", deviceKey: deviceKey)
            try await AgentEnrolment.install(
                userKeys: grantee.keys, deviceID: session.deviceID, deviceKey: deviceKey, configuration: configuration)
            var logger = Logger(label: "rescind.hostile.agent")
            logger.logLevel = ProcessInfo.processInfo.environment["RESCIND_HOSTILE_LOG_LEVEL"].flatMap { Logger.Level(rawValue: $0) } ?? .critical
            let agent = try await DeviceAgent.open(configuration: configuration, logger: logger)
            let ended = Mutex(false)
            let running = Task {
                defer { ended.withLock { $0 = true } }
                try await agent.run(gracefulShutdownSignals: [], lockSignals: false)
            }

            let producer = try KafkaProducer(
                configuration: KafkaProducerConfiguration(
                    bootstrapServers: service.cluster.bootstrapServers, clientID: "rescind-hostile", linger: .milliseconds(5)),
                logger: logger)
            let topic = service.topicPrefix + Topic.deviceCommands.rawValue
            let deviceKeyBytes = Data(session.deviceID.uuidString.lowercased().utf8)
            // The context is drawn from the seed as the samples are (as `HostileRun` and the suite's
            // sample do), but for what the running service and agent chose (the grant service's
            // key, the device) and the clock: a seed replays the run.
            var random = SeededGenerator(seed: seed).split(0xC0_17E7)
            let stranger = HostileEnvelopes.signingKey(&random)
            let revocation = RevocationEvent(
                eventID: random.uuid(), familyMemberID: random.uuid(), ownerUserID: random.uuid(), ownerAgreementPublicKey: Data(count: 32),
                revokedUserID: random.uuid(), revokedByUserID: random.uuid(), newFMKVersion: 2, recordsReencrypted: 0, reason: nil,
                clientDurationMs: nil, occurredAt: Date(),
                expectedDevices: [
                    .init(deviceID: random.uuid(), userID: random.uuid(), action: .fmkRotation,
                          signingPublicKey: Data(stranger.publicKey.rawRepresentation))
                ])
            var generator = HostileEnvelopes(
                seed: seed,
                context: .init(grantKey: grantKey, revocation: revocation, deviceKeys: [:], commandDevice: session.deviceID),
                maxStringBytes: maxStringBytes)

            /// Refused (counted by reason) plus stored (each stored command is acknowledged).
            func accounted() async throws -> (refused: Int, stored: Int, reasons: [String: Int]) {
                let status = try await agent.status()
                let reasons = status.counters.filter { $0.key.hasPrefix("rejected_") }
                return (reasons.values.reduce(0, +), status.sentAcks + status.owedAcks + status.pendingCommands, reasons)
            }
            var figures = Figures()
            var probes = 0
            /// A genuine command, signed by the grant service; `true` once the agent completed it within `timeout`.
            func probe(timeout: Duration) async throws -> Bool {
                probes += 1
                let command = DeviceCommand(
                    commandID: UUID(), eventID: UUID(), deviceID: session.deviceID, action: .secureDeletion,
                    familyMemberID: UUID(), newFMKVersion: 2, issuedAt: Timestamp.truncated(Date()))
                _ = try await producer.send(
                    topic: topic, key: deviceKeyBytes,
                    value: try SignedMessage(schema: DeviceCommand.schema, signer: "grant-service", payload: command, key: grantKey).encoded())
                return try await Self.waitUntil(timeout: timeout) {
                    let last = try await agent.status().lastCommand
                    return last?.commandID == command.commandID && last?.completedAt != nil
                }
            }
            // The agent consumes (its group joined) before the first hostile message.
            guard try await probe(timeout: .seconds(60)) else { throw HostileRunError("the agent never consumed a genuine command") }
            while figures.sent < count {
                let size = min(round, count - figures.sent)
                for _ in 0..<size {
                    // Keyed to this device: a message keyed elsewhere is not the agent's to judge.
                    let sample = generator.next(.deviceCommands)
                    _ = try await producer.send(topic: topic, key: deviceKeyBytes, value: sample.value)
                }
                figures.sent += size
                // Accounted for, or a stall: no progress for 60 s.
                var last = (count: -1, at: ContinuousClock.now)
                let drained = try await Self.waitUntil(timeout: .seconds(3600)) {
                    if ended.withLock({ $0 }) { return true }
                    let now = try await accounted()
                    let total = now.refused + now.stored
                    if total != last.count { last = (total, ContinuousClock.now) }
                    if ContinuousClock.now - last.at > .seconds(60) { throw HostileRunError("no progress at \(total) of \(figures.sent + probes)") }
                    return total == figures.sent + probes
                }
                let prompt = try await probe(timeout: .seconds(5))
                if !drained || !prompt { figures.stalls += 1 }
                print("  device_commands \(figures.sent)/\(count): accounted \(drained), genuine command within 5 s \(prompt)")
            }
            await producer.shutdown()
            let final = try await accounted()
            figures.quarantined = final.refused
            figures.applied = final.stored - probes
            figures.reasons = final.reasons
            // A crash of the agent ends its run on its own; a healthy one is still running.
            if ended.withLock({ $0 }) { figures.crashes = 1 }
            running.cancel()
            if case .failure(let error) = await running.result, figures.crashes > 0 { print("  agent ended with \(error)") }
            return figures
        }
    }

    /// Polls every 200 ms: `status()` shares the agent's one SQLite queue with its writes.
    static func waitUntil(timeout: Duration, _ condition: () async throws -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while try await !condition() {
            guard ContinuousClock.now < deadline else { return false }
            try await Task.sleep(for: .milliseconds(200))
        }
        return true
    }
}

struct HostileRunError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
