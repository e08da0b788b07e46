import Foundation
import AuditService
import RescindCrypto
import RescindDevKit
import RescindKafka
import RescindObservability
import RescindPostgres
import RescindProtocol
import RescindTLS
import RescindTestSupport

/// One run of `rescind-hostile` against an in-process audit service.
struct HostileRun {
    let perTopic: Int
    let round: Int
    let seed: UInt64
    let maxStringBytes: Int

    static let topics: [Topic] = [.revocationEvents, .accessEvents, .deviceAcks]
    static let promptly = Duration.seconds(5)

    struct Tally {
        var sent = 0, quarantined = 0, applied = 0, stalls = 0
    }

    /// - Returns: whether anything failed (a stall, a crash, a chain that does not verify).
    func run() async throws -> Bool {
        let started = ContinuousClock.now
        let cluster = try DevelopmentCluster()
        // The context is drawn from the seed as the samples are: a seed replays the run (but for the clock).
        var random = SeededGenerator(seed: seed).split(0xC0_17E7)
        let grantKey = HostileEnvelopes.signingKey(&random)
        let configuration = AuditServiceHarness.configuration(cluster: cluster, grantKey: grantKey.publicKey)
        let service = try await AuditServiceHarness.start(configuration: configuration, cluster: cluster)
        let producer = try KafkaProducer(
            configuration: KafkaProducerConfiguration(
                bootstrapServers: cluster.bootstrapServers, clientID: "rescind-hostile", linger: .milliseconds(5)),
            logger: AuditServiceHarness.logger)
        let prefix = configuration.kafka.topicPrefix
        func send(_ topic: Topic, key: Data?, value: Data?) async throws {
            _ = try await producer.send(topic: prefix + topic.rawValue, key: key, value: value)
        }
        func count(_ sql: String) async throws -> Int {
            try await service.withConnection {
                try await $0.query(PostgresQuery(unsafeSQL: sql)).first!.decode(Int.self, column: 0)
            }
        }

        // A revocation the hostile acks can name, with its expected devices' keys.
        var devices: [(id: UUID, key: Ed25519.PrivateKey)] = []
        for _ in 0..<3 { devices.append((random.uuid(), HostileEnvelopes.signingKey(&random))) }
        var expected: [RevocationEvent.ExpectedDevice] = []
        for (index, device) in devices.enumerated() {
            expected.append(
                .init(deviceID: device.id, userID: random.uuid(), action: index == 0 ? .secureDeletion : .fmkRotation,
                      signingPublicKey: Data(device.key.publicKey.rawRepresentation)))
        }
        let revocation = RevocationEvent(
            eventID: random.uuid(), familyMemberID: random.uuid(), ownerUserID: random.uuid(),
            ownerAgreementPublicKey: HostileEnvelopes.agreementPublicKey(&random), revokedUserID: random.uuid(),
            revokedByUserID: random.uuid(), newFMKVersion: 2, recordsReencrypted: 10, reason: "hostile run", clientDurationMs: 1,
            occurredAt: Timestamp.truncated(Date()), expectedDevices: expected)
        try await send(
            .revocationEvents, key: Data(revocation.familyMemberID.uuidString.lowercased().utf8),
            value: try SignedMessage(schema: RevocationEvent.schema, signer: "grant-service", payload: revocation, key: grantKey).encoded())
        try await waitUntil("the base revocation", timeout: .seconds(60)) {
            try await count("SELECT count(*) FROM revocation_devices") == 3
        }
        let baseline = try await count("SELECT count(*) FROM processed_events")

        var generator = HostileEnvelopes(
            seed: seed,
            context: .init(
                grantKey: grantKey, revocation: revocation,
                deviceKeys: Dictionary(uniqueKeysWithValues: devices.map { ($0.id, $0.key) }), commandDevice: random.uuid()),
            maxStringBytes: maxStringBytes)
        var tallies = Dictionary(uniqueKeysWithValues: Self.topics.map { ($0, Tally()) })
        var probes = 0
        print("rescind-hostile: seed \(seed), \(perTopic) per topic in rounds of \(round), strings up to \(maxStringBytes) bytes")
        var done = 0
        while done < perTopic {
            let size = min(round, perTopic - done)
            for topic in Self.topics {
                for _ in 0..<size {
                    let sample = generator.next(topic)
                    try await send(topic, key: sample.key, value: sample.value)
                }
                tallies[topic]!.sent += size
            }
            done += size
            // Every message accounted for (refused or applied), then a good one within 5 s.
            let accounted = try await waitUntil("round ending at \(done)", timeout: .seconds(600)) {
                let (events, acks) = try await Self.accounted(count: count, baseline: baseline + probes)
                return events == tallies[.revocationEvents]!.sent + tallies[.accessEvents]!.sent
                    && acks == tallies[.deviceAcks]!.sent
            }
            probes += 1
            let probe = AccessEvent(
                eventID: UUID(), kind: .familyMemberCreated, familyMemberID: UUID(), ownerUserID: UUID(),
                ownerAgreementPublicKey: Data(X25519.PrivateKey().publicKey.rawRepresentation), actorUserID: UUID(),
                targetUserID: nil, fmkVersion: 1, details: [:], occurredAt: Timestamp.truncated(Date()))
            try await send(
                .accessEvents, key: Data(probe.familyMemberID.uuidString.lowercased().utf8),
                value: try SignedMessage(schema: AccessEvent.schema, signer: "grant-service", payload: probe, key: grantKey).encoded())
            let prompt = try await waitUntil("the good message", timeout: Self.promptly) {
                try await count("SELECT count(*) FROM audit_log WHERE source_id = '\(probe.eventID)'") == 1
            }
            if !accounted || !prompt {
                for topic in Self.topics { tallies[topic]!.stalls += 1 }
            }
            print("  \(done)/\(perTopic) per topic: accounted \(accounted), good message within 5 s \(prompt)")
        }

        for topic in Self.topics {
            tallies[topic]!.quarantined = try await count(
                "SELECT coalesce(sum(rejected), 0)::bigint FROM rejection_tallies WHERE topic = '\(prefix + topic.rawValue)'")
        }
        tallies[.revocationEvents]!.applied = try await count(
            "SELECT count(*) FROM processed_events WHERE kind = 'revocation'") - 1
        tallies[.accessEvents]!.applied = try await count(
            "SELECT count(*) FROM processed_events WHERE kind <> 'revocation'") - probes
        tallies[.deviceAcks]!.applied = try await count("SELECT (SELECT count(*) FROM device_acks) + (SELECT count(*) FROM pending_acks)")
        let reasons = try await service.withConnection { connection in
            try await connection.query(
                "SELECT topic, reason, sum(rejected)::bigint FROM rejection_tallies GROUP BY topic, reason ORDER BY topic, 3 DESC"
            ).map { try $0.decode(String.self, String.self, Int.self) }
        }
        let chains = try await service.withConnection { connection in
            let families = try await connection.query("SELECT family_member_id FROM audit_chain_heads").map {
                try $0.decode(UUID.self, column: 0)
            }
            var broken = 0
            for family in families {
                let report = try await AuditChainVerifier(publicKey: service.auditKey).verify(familyMemberID: family, on: connection)
                if !report.valid { broken += 1 }
            }
            return (families.count, broken)
        }
        let alive = await Self.answers(service.baseURL.appendingPathComponent("health"), tls: service.clientTLS)
        let ready = await Self.answers(service.baseURL.appendingPathComponent("ready"), tls: service.clientTLS)
        await producer.shutdown()
        await service.stop()
        await service.dropState()
        cluster.shutdown()

        // The service runs in this process: a crash would have ended the run before this line.
        let crashes = alive ? 0 : 1
        print("")
        print("| topic | sent | quarantined | applied | stalls | crashes |")
        print("|---|---:|---:|---:|---:|---:|")
        for topic in Self.topics {
            let tally = tallies[topic]!
            print("| `\(topic.rawValue)` | \(tally.sent) | \(tally.quarantined) | \(tally.applied) | \(tally.stalls) | \(crashes) |")
        }
        print("")
        print("quarantine reasons: " + reasons.map { "\($0.0.dropFirst(prefix.count)) \($0.1) \($0.2)" }.joined(separator: ", "))
        print("audit chains verified: \(chains.0 - chains.1) of \(chains.0); /health \(alive ? 200 : 0), /ready \(ready ? 200 : 503)")
        print("took \((ContinuousClock.now - started).wholeSeconds) s")
        return tallies.values.contains { $0.stalls > 0 } || crashes > 0 || chains.1 > 0 || !ready
    }

    /// Input messages accounted for: events refused or applied, acks refused, applied or held.
    static func accounted(count: (String) async throws -> Int, baseline: Int) async throws -> (events: Int, acks: Int) {
        let refusedEvents = try await count("SELECT coalesce(sum(rejected), 0)::bigint FROM rejection_tallies WHERE topic NOT LIKE '%device_acks'")
        let applied = try await count("SELECT count(*) FROM processed_events") - baseline
        let refusedAcks = try await count("SELECT coalesce(sum(rejected), 0)::bigint FROM rejection_tallies WHERE topic LIKE '%device_acks'")
        let kept = try await count("SELECT (SELECT count(*) FROM device_acks) + (SELECT count(*) FROM pending_acks)")
        return (refusedEvents + applied, refusedAcks + kept)
    }

    /// Polls `condition` until it holds (`true`) or `timeout` passes (`false`).
    @discardableResult
    func waitUntil(_ what: String, timeout: Duration, _ condition: () async throws -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while try await !condition() {
            guard ContinuousClock.now < deadline else { return false }
            try await Task.sleep(for: .milliseconds(20))
        }
        return true
    }

    /// Whether `url` answers 200, reached as the service's own clients reach it (`tls`: the
    /// suite's CA when the harness serves HTTPS; URLSession on Linux cannot be given one).
    static func answers(_ url: URL, tls: ClientTLS) async -> Bool {
        (try? await TestHTTP.send("GET", url, tls: tls, timeout: .seconds(10)))?.status == 200
    }
}
