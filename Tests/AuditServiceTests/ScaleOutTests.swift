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

/// Two grant services and two audit services, sharing one database and one broker (the
/// outbox through `FOR UPDATE SKIP LOCKED` and claim leases, the partitions through the
/// consumer group), lose nothing and double nothing when one of each is killed with SIGKILL
/// mid-way and the group rebalances while revocations are being tracked.
@Suite(.serialized) struct ScaleOutTests {
    struct Member {
        let session: UserSession
        let deviceKey: Ed25519.PrivateKey
        var userID: UUID { session.keys.userID }
        var deviceID: UUID { session.deviceID }
    }

    static func member(_ name: String, on url: URL) async throws -> Member {
        let deviceKey = Ed25519.PrivateKey()
        let session = try await UserSession.register(
            keys: .generate(), displayName: name, deviceName: "\(name)'s phone", deviceKey: deviceKey, baseURL: url,
            tls: ScaleOutStack.clientTLS)
        return Member(session: session, deviceKey: deviceKey)
    }

    /// Plays every device agent: reads the device commands as they are published and signs one
    /// ack per command (a command delivered twice is acked once, as an agent dedupes by id).
    final class Agents: Sendable {
        let keys: [UUID: Ed25519.PrivateKey]
        let acked = Mutex<Set<UUID>>([])
        let duplicateCommands = Mutex(0)

        init(_ members: [Member]) {
            keys = Dictionary(uniqueKeysWithValues: members.map { ($0.deviceID, $0.deviceKey) })
        }

        func run(_ stack: ServiceProcesses, cluster: DevelopmentCluster) async throws {
            let consumer = try KafkaConsumer(
                configuration: KafkaConsumerConfiguration(bootstrapServers: cluster.bootstrapServers, clientID: "test-agents"),
                subscription: .partitions(
                    (0..<ScaleOutStack.partitions).map {
                        KafkaPartitionAssignment(
                            topic: stack.configuration.topicPrefix + Topic.deviceCommands.rawValue, partition: $0, start: .beginning)
                    }),
                logger: AuditServiceHarness.logger)
            let producer = try KafkaProducer(
                configuration: KafkaProducerConfiguration(bootstrapServers: cluster.bootstrapServers, clientID: "test-agents"),
                logger: AuditServiceHarness.logger)
            do {
                for try await message in consumer.messages {
                    let command = try SignedMessage<DeviceCommand>.verified(
                        from: message.value ?? Data(), schema: DeviceCommand.schema, key: stack.grantKey
                    ).payload
                    guard acked.withLock({ $0.insert(command.commandID).inserted }) else {
                        duplicateCommands.withLock { $0 += 1 }
                        continue
                    }
                    let ack = DeviceAck(
                        ackID: UUID(), commandID: command.commandID, eventID: command.eventID, deviceID: command.deviceID,
                        action: command.action, outcome: .applied, recordsProcessed: 2,
                        fmkVersion: command.action == .secureDeletion ? 0 : command.newFMKVersion, durationMs: 5, error: nil,
                        ackedAt: Timestamp.truncated(Date()))
                    let envelope = try SignedMessage(
                        schema: DeviceAck.schema, signer: "device:\(command.deviceID.uuidString.lowercased())", payload: ack,
                        key: try #require(keys[command.deviceID]))
                    _ = try await producer.send(
                        topic: stack.configuration.topicPrefix + Topic.deviceAcks.rawValue,
                        key: Data(command.deviceID.uuidString.lowercased().utf8), value: try envelope.encoded())
                }
            } catch is CancellationError {}
            await consumer.close()
            await producer.shutdown()
        }
    }

    @Test(.timeLimit(.minutes(5)))
    func killingOneGrantAndOneAuditServiceMidWayLosesAndDoublesNothing() async throws {
        try await ScaleOutStack.with { stack, cluster in
            // Owner A works through grant service 0, owner B through grant service 1; each
            // family member is shared with three of the four adults.
            let ownerA = try await Self.member("Owner A", on: stack.grantURLs[0])
            let ownerB = try await Self.member("Owner B", on: stack.grantURLs[1])
            var adults: [Member] = []
            for index in 0..<4 { adults.append(try await Self.member("Adult \(index)", on: stack.grantURLs[index % 2])) }
            var families: [(owner: Member, id: UUID, grantees: [Member])] = []
            for (index, owner) in [ownerA, ownerA, ownerA, ownerB, ownerB, ownerB].enumerated() {
                let (id, fmk) = try await owner.session.createFamilyMember()
                for record in 0..<2 {
                    _ = try await owner.session.putRecord(id, plaintext: Array("record \(record)".utf8), fmk: fmk, version: 1)
                }
                let grantees = (0..<3).map { adults[(index + $0) % 4] }
                for grantee in grantees { _ = try await owner.session.grant(id, to: grantee.userID) }
                families.append((owner, id, grantees))
            }
            let agents = Agents([ownerA, ownerB] + adults)
            let agentTask = Task { try await agents.run(stack, cluster: cluster) }
            defer { agentTask.cancel() }

            // Phase 1: a revocation on each family member of owner A (grant service 0) and one
            // of owner B's; then grant service 0 and audit service 0 die with SIGKILL while the
            // events, commands and acks are in flight.
            var events: [UUID] = []
            for family in families[0..<4] {
                events.append(try await family.owner.session.revoke(family.id, user: family.grantees[0].userID).eventID)
            }
            await stack.grants[0].kill()
            await stack.audits[0].kill()

            // Phase 2: the survivors carry on; audit service 0 comes back halfway (the group
            // rebalances again while revocations are tracked).
            events.append(try await families[4].owner.session.revoke(families[4].id, user: families[4].grantees[0].userID).eventID)
            try await stack.audits[0].start()
            events.append(try await families[5].owner.session.revoke(families[5].id, user: families[5].grantees[0].userID).eventID)

            // Every revocation completes, once.
            let deadline = ContinuousClock.now + .seconds(120)
            while ContinuousClock.now < deadline {
                let completed = try await stack.count(
                    schema: stack.configuration.auditSchema, "SELECT count(*) FROM revocations WHERE completed_at IS NOT NULL")
                if completed == events.count { break }
                try await Task.sleep(for: .milliseconds(250))
            }
            #expect(
                try await stack.count(schema: stack.configuration.auditSchema, "SELECT count(*) FROM revocations WHERE completed_at IS NOT NULL")
                    == events.count, "every revocation completed:\n\(stack.logTails())")

            // Grant side: every outbox row published, none lost, duplicates counted.
            let grantDeadline = ContinuousClock.now + .seconds(30)
            while try await stack.count(schema: stack.configuration.grantSchema, "SELECT count(*) FROM outbox WHERE sent_at IS NULL") > 0,
                ContinuousClock.now < grantDeadline
            {
                try await Task.sleep(for: .milliseconds(200))
            }
            #expect(try await stack.count(schema: stack.configuration.grantSchema, "SELECT count(*) FROM outbox WHERE sent_at IS NULL") == 0)
            let committed = try await stack.withConnection(schema: stack.configuration.grantSchema) { connection in
                try await connection.query("SELECT topic, payload FROM outbox").map { try $0.decode(String.self, Data.self) }
            }
            var published: [String: [Data: Int]] = [:]
            for (topic, messages) in try await stack.messages([.revocationEvents, .accessEvents, .deviceCommands], partitions: ScaleOutStack.partitions) {
                for message in messages {
                    published[stack.configuration.topicPrefix + topic.rawValue, default: [:]][message.value ?? Data(), default: 0] += 1
                }
            }
            let lost = committed.filter { published[$0.0]?[$0.1] == nil }.count
            let duplicates = published.values.flatMap(\.values).reduce(0) { $0 + max(0, $1 - 1) }
            let strays = published.values.map(\.count).reduce(0, +) - committed.count
            #expect(lost == 0, "outbox rows never published")
            #expect(strays == 0, "messages on the topics that no outbox row holds")
            print("scale-out: \(committed.count) outbox rows, \(lost) lost, \(duplicates) duplicate deliveries (deduplicated downstream), \(agents.duplicateCommands.withLock { $0 }) duplicate commands seen by agents")

            // Audit side: one applied state per expected device, one ack each, one
            // `revocation_completed` per revocation, no entry twice, chains without gaps, and
            // every conclusion published.
            let audit = stack.configuration.auditSchema
            #expect(try await stack.count(schema: audit, "SELECT count(*) FROM revocations") == events.count)
            #expect(try await stack.count(schema: audit, "SELECT count(*) FROM revocation_devices") == events.count * 4)
            #expect(try await stack.count(schema: audit, "SELECT count(*) FROM revocation_devices WHERE state <> 'applied'") == 0)
            #expect(try await stack.count(schema: audit, "SELECT count(*) FROM device_acks") == events.count * 4)
            for event in events {
                #expect(
                    try await stack.count(
                        schema: audit,
                        "SELECT count(*) FROM audit_log WHERE event_type = 'revocation_completed' AND source_id = \(event)") == 1)
            }
            #expect(
                try await stack.count(
                    schema: audit,
                    "SELECT count(*) FROM (SELECT 1 FROM audit_log GROUP BY event_type, source_id HAVING count(*) > 1) AS twice")
                    == 0)
            #expect(
                try await stack.count(
                    schema: audit,
                    "SELECT count(*) FROM (SELECT 1 FROM audit_log GROUP BY family_member_id HAVING max(seq) <> count(*)) AS gaps")
                    == 0)
            let accessEvents = committed.filter { $0.0.hasSuffix(Topic.accessEvents.rawValue) }.count
            #expect(
                try await stack.count(schema: audit, "SELECT count(*) FROM audit_log")
                    == accessEvents + events.count * 2, "every access event, each revocation and its completion")
            let notificationDeadline = ContinuousClock.now + .seconds(20)
            while try await stack.count(schema: audit, "SELECT count(*) FROM notification_outbox WHERE sent_at IS NULL") > 0,
                ContinuousClock.now < notificationDeadline
            {
                try await Task.sleep(for: .milliseconds(200))
            }
            #expect(try await stack.count(schema: audit, "SELECT count(*) FROM notification_outbox WHERE sent_at IS NULL") == 0)
            #expect(
                try await stack.count(schema: audit, "SELECT count(*) FROM notification_outbox WHERE kind = 'revocation_completed'")
                    == events.count)
        }
    }
}
