import Foundation
import RescindCrypto
import RescindDevKit
import RescindKafka
import RescindProtocol
import RescindTestSupport
import Testing

@testable import AuditService

/// The adversary: a writer on the audit service's three input topics, holding no key, plus
/// the holders of valid keys (an expected device's, and the grant service's as a stronger
/// adversary) signing hostile values. A seeded, reproducible sample of generated hostile
/// envelopes (`HostileEnvelopes`; replay with `RESCIND_HOSTILE_SEED`) goes through the real
/// consumer into real PostgreSQL. Promise: no crash, every message refused or applied
/// (none lost), no stall (a good message afterwards is processed within 5 s), and every
/// audit chain still verifies.
@Suite struct HostileEnvelopeTests {
    static let samplesPerTopic = 100

    /// Everything the sample depends on but the clock, drawn from the seed: the stand-in grant
    /// service's key, the family, the revocation and its devices' ids and keys.
    struct SeededContext {
        let grantKey: Ed25519.PrivateKey
        let emma: TestFamily
        let devices: [TestFamily.Device]
        let revocation: RevocationEvent
        let commandDevice: UUID

        init(seed: UInt64, now: Date) {
            var random = SeededGenerator(seed: seed).split(0xC0_17E7)
            grantKey = HostileEnvelopes.signingKey(&random)
            let family = TestFamily(familyMemberID: random.uuid(), ownerUserID: random.uuid())
            let adultC = random.uuid()
            var devices: [TestFamily.Device] = []
            for user in [adultC, adultC, family.ownerUserID] {
                devices.append(TestFamily.Device(userID: user, id: random.uuid(), key: HostileEnvelopes.signingKey(&random)))
            }
            emma = family
            self.devices = devices
            revocation = family.revocation(of: adultC, devices: devices, at: now, eventID: random.uuid())
            commandDevice = random.uuid()
        }

        func generator(seed: UInt64, now: Date) -> HostileEnvelopes {
            HostileEnvelopes(
                seed: seed,
                context: .init(
                    grantKey: grantKey, revocation: revocation,
                    deviceKeys: Dictionary(uniqueKeysWithValues: devices.map { ($0.id, $0.key) }), commandDevice: commandDevice),
                maxStringBytes: 100_000, now: now)
        }
    }

    /// A failure is replayed from its seed: the whole sample stream (context included) is a
    /// function of the seed and the clock.
    @Test func theSameSeedGivesTheSameSamples() {
        let now = Date()
        func stream(_ seed: UInt64) -> [Data?] {
            var generator = SeededContext(seed: seed, now: now).generator(seed: seed, now: now)
            return (0..<60).flatMap { index -> [Data?] in
                let sample = generator.next([Topic.revocationEvents, .accessEvents, .deviceAcks][index % 3])
                return [sample.key, sample.value]
            }
        }
        #expect(stream(0x13_5EED) == stream(0x13_5EED))
        #expect(stream(0x13_5EED) != stream(0x13_5EEE))
    }

    @Test func aSampleOfHostileEnvelopesNeitherCrashesNorStallsAndTheChainsVerify() async throws {
        let seed = SeededGenerator.seed(fallback: 0x13_5EED)
        let now = Date()
        let context = SeededContext(seed: seed, now: now)
        try await AuditTestBed.with(grantKey: context.grantKey) { bed in
            let emma = context.emma
            let revocation = context.revocation
            let created = emma.accessEvent(.familyMemberCreated)
            try await bed.publish(created)
            try await bed.publish(revocation)
            // Both before the baseline: they travel on different topics, in no common order, and
            // one applied after the baseline was counted as a hostile message applied (the failure
            // seen once in a full suite run: 201 events accounted for of 200, for ever).
            try await bed.eventually("tracked, and the family member's creation applied") {
                guard try await bed.deviceStates(revocation.eventID).count == 3 else { return false }
                return try await bed.count(
                    "SELECT count(*) FROM processed_events WHERE event_id IN ('\(created.eventID)', '\(revocation.eventID)')") == 2
            }
            let baseline = try await bed.count("SELECT count(*) FROM processed_events")

            var generator = context.generator(seed: seed, now: now)
            var kinds: [HostileEnvelopes.Kind: Int] = [:]
            var edges: [Topic: Int] = [:]
            for index in 0..<(3 * Self.samplesPerTopic) {
                let topic = [Topic.revocationEvents, .accessEvents, .deviceAcks][index % 3]
                let sample = generator.next(topic)
                kinds[sample.kind, default: 0] += 1
                if sample.kind == .signedEdge { edges[topic, default: 0] += 1 }
                _ = try await bed.producer.send(topic: bed.topicPrefix + topic.rawValue, key: sample.key, value: sample.value)
            }

            // Every message is accounted for: refused (stored with its reason) or applied.
            let events = 2 * Self.samplesPerTopic, acks = Self.samplesPerTopic
            // The last counts seen, so that a mismatch says which side is off.
            var seen = ""
            do {
                try await bed.eventually("every hostile message refused or applied (seed \(seed))", timeout: .seconds(120)) {
                    let refusedEvents = try await bed.count("SELECT coalesce(sum(rejected), 0)::bigint FROM rejection_tallies WHERE topic NOT LIKE '%device_acks'")
                    let applied = try await bed.count("SELECT count(*) FROM processed_events") - baseline
                    let refusedAcks = try await bed.count("SELECT coalesce(sum(rejected), 0)::bigint FROM rejection_tallies WHERE topic LIKE '%device_acks'")
                    let deviceAcks = try await bed.count("SELECT count(*) FROM device_acks")
                    let held = try await bed.count("SELECT count(*) FROM pending_acks")
                    seen = "events: \(refusedEvents) refused + \(applied) applied of \(events); acks: \(refusedAcks) refused + "
                        + "\(deviceAcks) stored + \(held) held of \(acks)"
                    return refusedEvents + applied == events && refusedAcks + deviceAcks + held == acks
                }
            } catch {
                Issue.record("not every hostile message accounted for (seed \(seed)): \(seen)")
                throw error
            }
            // A good message still goes through promptly (against a yardstick measured now: one
            // more applied event, like the good message itself).
            try await HostileInputTests.expectStillConsuming(
                bed, entries: 1, within: try await HostileInputTests.yardstick(bed, messages: 1))
            // Validly signed values at the edges of their limits fit their columns: all applied.
            let appliedEvents = try await bed.count("SELECT count(*) FROM processed_events") - baseline - 2
            #expect(appliedEvents >= edges[.revocationEvents, default: 0] + edges[.accessEvents, default: 0], "seed \(seed)")
            #expect(try await bed.count("SELECT count(*) FROM device_acks") >= edges[.deviceAcks, default: 0], "seed \(seed)")

            let families = try await bed.withConnection { connection in
                try await connection.query("SELECT family_member_id FROM audit_chain_heads").map { try $0.decode(UUID.self, column: 0) }
            }
            #expect(families.contains(emma.familyMemberID))
            for family in families {
                let report = try await ChainVerificationTests.verify(bed, family)
                #expect(report.valid, "chain of \(family): \(report.problems) (seed \(seed))")
            }
            // The boundary caught everything: nothing reached SQL to be refused there (unprocessable)
            // or needed the retry budget.
            let reasons = try await bed.withConnection { connection in
                try await connection.query("SELECT reason, sum(rejected)::bigint FROM rejection_tallies GROUP BY reason").map {
                    try $0.decode(String.self, Int.self)
                }
            }
            #expect(!reasons.contains { $0.0 == "unprocessable" || $0.0 == "retries_exhausted" }, "\(reasons) (seed \(seed))")
            #expect(try await bed.get("/ready").status == 200)
            #expect(kinds.count >= HostileEnvelopes.Kind.allCases.count - 1, "\(kinds)")
        }
    }
}
