import Foundation
import RescindClient
import RescindPostgres
import RescindProtocol
import RescindTestSupport
import Testing

/// No resource held hostage by a broker outage: while every broker is
/// down, the outbox relay keeps no transaction, row lock or pool connection open while its
/// producer waits for the send timeout, commits and reads keep being served in their normal
/// time, and once the brokers return every outbox row is published exactly once.
@Suite struct OutboxOutageTests {
    /// Sessions of the test database holding a lock on this service's outbox while not running
    /// a statement: a transaction left open across the wait for Kafka.
    static func idleLockHolders(_ service: GrantServiceHarness) async throws -> [String] {
        try await service.withConnection { connection in
            try await connection.query(
                """
                SELECT a.pid::text || ' ' || coalesce(a.state, '?') || ': ' || left(coalesce(a.query, ''), 80)
                FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
                WHERE l.relation = to_regclass(\(service.schema + ".outbox")) AND a.pid <> pg_backend_pid()
                  AND a.state IS DISTINCT FROM 'active'
                """
            ).map { try $0.decode(String.self, column: 0) }
        }
    }

    static func claimedUnsent(_ service: GrantServiceHarness) async throws -> Int {
        try await service.count("SELECT count(*) FROM outbox WHERE sent_at IS NULL AND claimed_until > now()")
    }

    /// Fails if `call` takes longer than `limit` (the normal time of a request here is well under it).
    static func timed<T>(_ what: String, within limit: Duration = .seconds(5), _ call: () async throws -> T) async throws -> T {
        let start = ContinuousClock.now
        let result = try await call()
        let elapsed = ContinuousClock.now - start
        #expect(elapsed < limit, "\(what) took \(elapsed) while the broker was down")
        return result
    }

    @Test func aBrokerOutageHoldsNoTransactionNorConnectionAndRequestsKeepBeingServed() async throws {
        try await GrantServiceHarness.with({ configuration in
            // A short send timeout, so that batches fail and are retried during the outage;
            // a small pool, so that one connection held hostage would show.
            configuration.kafka.producerProperties["message.timeout.ms"] = "4000"
            configuration.database.poolSize = 3
        }) { service in
            let home = try await Household.make(service, records: 3)
            _ = try await home.adultC.addDevice(name: "Adult C's iPad")
            try await service.eventually("the access events are published") { try await OutboxDeliveryTests.unsent(service) == 0 }

            for broker in service.cluster.brokerIDs { try await service.cluster.setBrokerDown(broker) }
            let committed = try await Self.timed("the revocation") {
                try await home.adultA.revoke(home.emma, user: home.adultC.keys.userID, reason: "custody change")
            }
            #expect(committed.devicesNotified == 4)
            try await service.eventually("the relay has claimed the batch and waits for Kafka") {
                try await Self.claimedUnsent(service) > 0
            }

            // Over two send timeouts (claims, failures, releases, new claims), sample who holds
            // the outbox, and keep serving: more commits, and more concurrent reads than the pool
            // has connections.
            let outageEnd = ContinuousClock.now + .seconds(9)
            var samples = 0
            var round = 0
            while ContinuousClock.now < outageEnd {
                let holders = try await Self.idleLockHolders(service)
                #expect(holders.isEmpty, "a transaction is left open on the outbox: \(holders)")
                samples += 1
                if round % 5 == 0 {
                    _ = try await Self.timed("a record edit") {
                        try await home.adultA.putRecord(
                            home.emma, plaintext: Array("edit \(round)".utf8),
                            fmk: try await home.adultA.currentFMK(home.emma).fmk, version: committed.newFMKVersion)
                    }
                    try await Self.timed("eight concurrent reads on a pool of three") {
                        try await withThrowingTaskGroup(of: Int.self) { group in
                            for _ in 0..<8 { group.addTask { try await home.adultB.allRecords(home.emma).count } }
                            for try await count in group { #expect(count >= 3) }
                        }
                    }
                }
                round += 1
                try await Task.sleep(for: .milliseconds(300))
            }
            #expect(samples > 10)
            #expect(try await OutboxDeliveryTests.unsent(service) >= 1 + 4)
            _ = try await Self.timed("a second family member and a grant") {
                let (leo, _) = try await home.adultA.createFamilyMember()
                return try await home.adultA.grant(leo, to: home.adultB.keys.userID)
            }

            for broker in service.cluster.brokerIDs { try await service.cluster.setBrokerUp(broker) }
            try await service.eventually("the relay catches up", timeout: .seconds(40)) {
                try await OutboxDeliveryTests.unsent(service) == 0
            }
            #expect(try await service.count("SELECT count(*) FROM outbox WHERE claimed_until IS NOT NULL") == 0)

            // Exactly once per row: the count on each topic is the count of rows, nothing more.
            let expected = try await OutboxDeliveryTests.committed(service)
            #expect(Set(expected).count == expected.count)
            let counts = Dictionary(grouping: expected, by: \.topic).reduce(into: [Topic: Int]()) { counts, entry in
                let topic = Topic.allCases.first { service.topicPrefix + $0.rawValue == entry.key }!
                counts[topic] = entry.value.count
            }
            let delivered = try await OutboxDeliveryTests.delivered(service, expecting: counts)
            #expect(Set(delivered) == Set(expected))
            #expect(delivered.count == expected.count)
        }
    }

    /// A relay that crashed after claiming a batch leaves it claimed: no other relay takes it
    /// while the lease lasts, and once it has passed the next relay publishes the row
    /// (at-least-once), so nothing is lost.
    @Test func aCrashedRelaysClaimExpiresAndItsRowIsPublished() async throws {
        try await GrantServiceHarness.with { service in
            let payload = Data("left claimed by a relay that died \(UUID())".utf8)
            let marker = Data("written after the claim \(UUID())".utf8)
            // What a relay that died between claiming and marking leaves behind (a lease far longer
            // than any stall of a loaded machine), then an unclaimed row written after it.
            try await service.withConnection { connection in
                let topic = service.topicPrefix + Topic.accessEvents.rawValue
                try await connection.execute(
                    """
                    INSERT INTO outbox (topic, message_key, payload, claimed_until)
                    VALUES (\(topic), 'crashed-relay', \(payload), now() + interval '1 hour')
                    """)
                try await connection.execute(
                    "INSERT INTO outbox (topic, message_key, payload) VALUES (\(topic), 'marker', \(marker))")
            }
            // The marker published: the relay polled since the claim was written (no sleep standing in).
            try await service.eventually("a relay pass after the claim") {
                try await service.count("SELECT count(*) FROM outbox WHERE message_key = 'marker' AND sent_at IS NULL") == 0
            }
            #expect(try await OutboxDeliveryTests.unsent(service) == 1, "a live claim is respected")
            // The lease ends (what the hour would do, without waiting for it).
            _ = try await service.withConnection { connection in
                try await connection.execute("UPDATE outbox SET claimed_until = now() WHERE message_key = 'crashed-relay'")
            }
            try await service.eventually("the expired claim is taken over", timeout: .seconds(15)) {
                try await OutboxDeliveryTests.unsent(service) == 0
            }
            let messages = try await service.messages(.accessEvents, count: 2)
            #expect(Set(messages.map(\.value)) == [payload, marker])
        }
    }
}
