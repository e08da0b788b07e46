import DeviceAgent
import Foundation
import Logging
import RescindClient
import RescindCrypto
import RescindTLS

/// Device agents run inside the bench process, each with its own data directory, keystore
/// (unlocked by a key file), SQLite cache, command consumer (its own consumer group) and ack
/// producer — the same `DeviceAgent` the `rescind-agent` executable runs.
final class AgentFleet: Sendable {
    struct Member: Sendable {
        let agent: DeviceAgent
        let identity: AgentIdentity
        let configuration: AgentConfiguration
        let task: Task<Void, any Error>
    }

    let members: [Member]

    private init(members: [Member]) {
        self.members = members
    }

    /// The configuration every bench agent gets: the stack's addresses, a key file, a cheap
    /// keystore, and `fetch.wait.max.ms` and the receipt hold as given (the tuning this benchmark reports).
    static func configuration(
        for identity: AgentIdentity, stack: BenchStack, fetchWaitMilliseconds: Int?, receiptHoldMilliseconds: Int? = nil
    ) throws -> AgentConfiguration {
        let root = stack.workDirectory.appendingPathComponent("agents/\(identity.deviceID.uuidString.lowercased())")
        let keyFile = root.appendingPathComponent("storage.key").path
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        if !FileManager.default.fileExists(atPath: keyFile) {
            _ = FileManager.default.createFile(
                atPath: keyFile, contents: Data(SecureRandom.bytes(count: 32)), attributes: [.posixPermissions: 0o600])
        }
        var configuration = AgentConfiguration(
            dataDirectory: root.appendingPathComponent("data").path, grantServiceURL: stack.grantURL,
            grantServiceKey: stack.serviceKey,
            kafka: .init(bootstrapServers: stack.bootstrapServers, topicPrefix: stack.topicPrefix),
            unlock: .keyFile(keyFile))
        configuration.tls = BenchStack.clientTLS
        if let fetchWaitMilliseconds {
            configuration.kafka.consumerProperties["fetch.wait.max.ms"] = "\(fetchWaitMilliseconds)"
        }
        if let receiptHoldMilliseconds { configuration.receiptHold = .milliseconds(receiptHoldMilliseconds) }
        return configuration
    }

    /// Enrols, opens, syncs (one self-heal pass each, a few at a time) and runs every device.
    static func start(
        _ identities: [AgentIdentity], stack: BenchStack, fetchWaitMilliseconds: Int, receiptHoldMilliseconds: Int? = nil,
        logger: Logger
    ) async throws -> AgentFleet {
        var members: [Member] = []
        do {
            for identity in identities {
                let configuration = try configuration(
                    for: identity, stack: stack, fetchWaitMilliseconds: fetchWaitMilliseconds,
                    receiptHoldMilliseconds: receiptHoldMilliseconds)
                try await AgentEnrolment.install(
                    userKeys: identity.keys, deviceID: identity.deviceID, deviceKey: identity.deviceKey, configuration: configuration)
                let agent = try await DeviceAgent.open(configuration: configuration, logger: logger)
                let task = Task { try await agent.run(gracefulShutdownSignals: []) }
                members.append(Member(agent: agent, identity: identity, configuration: configuration, task: task))
            }
            let fleet = AgentFleet(members: members)
            try await fleet.selfHealAll()
            return fleet
        } catch {
            await AgentFleet(members: members).stop()
            throw error
        }
    }

    /// One self-heal pass on every agent, four at a time.
    func selfHealAll() async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            var next = members.makeIterator()
            for _ in 0..<4 {
                guard let member = next.next() else { break }
                group.addTask { try await member.agent.selfHeal() }
            }
            while try await group.next() != nil {
                if let member = next.next() { group.addTask { try await member.agent.selfHeal() } }
            }
        }
    }

    func member(_ deviceID: UUID) -> Member? {
        members.first { $0.identity.deviceID == deviceID }
    }

    func stop() async {
        for member in members { member.task.cancel() }
        for member in members { _ = try? await member.task.value }
    }
}
