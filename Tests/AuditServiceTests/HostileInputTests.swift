import Foundation
import Logging
import RescindCrypto
@testable import RescindPostgres
import RescindProtocol
import RescindTestSupport
import Testing

@testable import AuditService

/// The adversary: anyone who can write to the input topics (no key at all), and the
/// revoked user, whose own device is an expected device and signs its acks with a valid
/// key. Promise: no message stops the audit service. Each hostile message is quarantined
/// (stored, reason recorded, `message_rejected` published), never retried, and a good message
/// sent after it is processed promptly. Real PostgreSQL, the real consumer, the mock cluster over TCP.
///
/// "Promptly" is measured so that a loaded machine cannot break it and a stalled consumer
/// still does: the bound is 3 × the time as many good messages take on the same service in
/// the same run (`yardstick`), at least 5 s. Load slows the yardstick as much as the hostile
/// run; a hostile message the consumer retried instead would add its backoff (10 attempts,
/// ~21 s of sleeps that load does not shorten), and the metrics must show no transient failure
/// at all (`expectNothingRetried`), which no amount of load changes.
@Suite struct HostileInputTests {
    static let promptly = Duration.seconds(5)

    static func rejections(_ bed: AuditTestBed) async throws -> [(reason: String, signer: String?)] {
        try await bed.withConnection { connection in
            try await connection.query("SELECT reason, signer FROM rejected_messages ORDER BY rejection_id").map {
                try $0.decode(String.self, String?.self)
            }
        }
    }

    /// The bound for "promptly" on this bed now: `count` good access events (each its own family
    /// member, so no entry the test counts) are published and timed until their audit entries
    /// land; 3 × that, at least 5 s. Call it once the consumer has joined its group.
    static func yardstick(_ bed: AuditTestBed, messages count: Int) async throws -> Duration {
        let families = (0..<count).map { _ in TestFamily() }
        let ids = families.map { "'\($0.familyMemberID)'" }.joined(separator: ",")
        let started = ContinuousClock.now
        for family in families { try await bed.publish(family.accessEvent(.familyMemberCreated)) }
        try await bed.eventually("the yardstick's \(count) good message(s)", timeout: .seconds(60)) {
            try await bed.count("SELECT count(*) FROM audit_log WHERE family_member_id IN (\(ids))") == count
        }
        let took = ContinuousClock.now - started
        print("hostile-input yardstick: \(count) good message(s) in \(took); promptly means within \(max(promptly, took * 3))")
        return max(promptly, took * 3)
    }

    /// A good access event, then waits (at most `bound`) for its audit entry.
    static func expectStillConsuming(_ bed: AuditTestBed, entries: Int, within bound: Duration) async throws {
        let emma = TestFamily()
        try await bed.publish(emma.accessEvent(.familyMemberCreated))
        try await bed.eventually("a good message after the hostile ones (bound \(bound))", timeout: bound) {
            try await bed.count("SELECT count(*) FROM audit_log WHERE family_member_id = '\(emma.familyMemberID)'") == entries
        }
    }

    /// No message was retried: a hostile message is quarantined on its first attempt.
    static func expectNothingRetried(_ bed: AuditTestBed) async throws {
        let metrics = String(decoding: try await bed.get("/metrics").body, as: UTF8.self)
        // Exported from the start at 0, so a renamed series fails here instead of passing unseen.
        #expect(metrics.contains(#"rescind_audit_handling_failures_total{class="transient"} 0"#))
    }

    @Test("an unsigned writer puts U+0000 in a revocation event's signer: quarantined, and the service keeps consuming")
    func nulInTheSignerOfARevocationEvent() async throws {
        try await AuditTestBed.with { bed in
            let emma = TestFamily()
            let event = emma.revocation(of: UUID(), devices: [])
            var envelope = try JSONSerialization.jsonObject(
                with: try SignedMessage(schema: RevocationEvent.schema, signer: "grant-service", payload: event, key: bed.grantKey)
                    .encoded()) as! [String: Any]
            envelope["signer"] = "grant-\u{0}service"
            try await bed.publishRaw(.revocationEvents, key: emma.familyMemberID, value: try JSONSerialization.data(withJSONObject: envelope))
            // A terminal escape sequence in the signer is refused the same way, never stored.
            envelope["signer"] = "\u{1b}[31mgrant-service"
            try await bed.publishRaw(.revocationEvents, key: emma.familyMemberID, value: try JSONSerialization.data(withJSONObject: envelope))

            // Quarantined first (this wait includes the consumer's group join), then a good message
            // promptly, against a yardstick measured now.
            try await bed.eventually("two quarantined") { try await bed.count("SELECT count(*) FROM rejected_messages") == 2 }
            try await Self.expectStillConsuming(bed, entries: 1, within: try await Self.yardstick(bed, messages: 1))
            try await Self.expectNothingRetried(bed)
            let rejections = try await Self.rejections(bed)
            #expect(rejections.map(\.reason).sorted() == ["invalid_field", "invalid_field"])
            #expect(rejections.allSatisfy { $0.signer == nil })
            #expect(try await bed.count("SELECT count(*) FROM revocations") == 0)
            let notifications = try await bed.notifications(count: 2)
            #expect(notifications.allSatisfy { $0.kind == .messageRejected && $0.rejection?.reason == "invalid_field" })
            #expect(notifications.allSatisfy { $0.rejection?.topic.hasSuffix("revocation_events") == true })
        }
    }

    @Test("the revoked user's own device signs acks with oversized counts and a NUL in the error: quarantined, the real ack still lands")
    func validlySignedAckWithOversizedIntegersAndNUL() async throws {
        try await AuditTestBed.with { bed in
            let emma = TestFamily()
            let adultC = UUID()
            let phone = TestFamily.Device(userID: adultC)
            let revocation = emma.revocation(of: adultC, devices: [phone])
            try await bed.publish(revocation)
            try await bed.eventually("tracked") { try await bed.deviceStates(revocation.eventID).count == 1 }
            // Five messages follow (four hostile, the genuine ack): the bound is what five good ones take now.
            let bound = try await Self.yardstick(bed, messages: 5)

            var hostile: [DeviceAck] = []
            for field in 0..<3 {
                var ack = TestFamily.ack(phone, for: revocation)
                switch field {
                case 0: ack.recordsProcessed = 1 << 31
                case 1: ack.fmkVersion = Int(Int64.max)
                default: ack.durationMs = 1 << 40
                }
                hostile.append(ack)
            }
            hostile.append(TestFamily.ack(phone, for: revocation, outcome: .failed, error: "disk\u{0}full"))
            for ack in hostile { try await bed.publish(ack, signedBy: phone.key) }
            try await bed.publish(TestFamily.ack(phone, for: revocation), signedBy: phone.key)

            try await bed.eventually("the genuine ack, promptly (bound \(bound))", timeout: bound) {
                try await bed.deviceStates(revocation.eventID)[phone.id] == "applied"
            }
            try await bed.eventually("four quarantined") { try await bed.count("SELECT count(*) FROM rejected_messages") == 4 }
            #expect(try await Self.rejections(bed).map(\.reason) == Array(repeating: "invalid_field", count: 4))
            #expect(try await bed.count("SELECT count(*) FROM device_acks") == 1)
            let notifications = try await bed.notifications(count: 5)
            #expect(notifications.filter { $0.kind == .messageRejected }.count == 4)
            #expect(notifications.contains { $0.kind == .revocationCompleted })
            try await Self.expectStillConsuming(bed, entries: 1, within: bound)
            try await Self.expectNothingRetried(bed)
        }
    }

    @Test("a message PostgreSQL refuses for its content (SQLSTATE class 23) is quarantined as unprocessable, not retried")
    func contentErrorsFromPostgresAreQuarantined() async throws {
        try await AuditTestBed.with { bed in
            // Stands in for any value the checks did not foresee: the database refuses this kind.
            try await bed.withConnection { connection in
                try await connection.execute("ALTER TABLE processed_events ADD CONSTRAINT hostile CHECK (kind <> 'access_regranted')")
            }
            let emma = TestFamily()
            try await bed.publish(emma.accessEvent(.accessRegranted, target: UUID()))
            // Quarantined first (not counting the group join), then a good message promptly.
            try await bed.eventually("quarantined") { try await bed.count("SELECT count(*) FROM rejected_messages") == 1 }
            try await Self.expectStillConsuming(bed, entries: 1, within: try await Self.yardstick(bed, messages: 1))
            try await Self.expectNothingRetried(bed)
            let rejection = try #require(try await Self.rejections(bed).first)
            #expect(rejection.reason == "unprocessable" && rejection.signer == "grant-service")
            let stored = try await bed.withConnection { connection in
                try await connection.query("SELECT envelope FROM rejected_messages").first?.decode(Data.self, column: 0)
            }
            #expect(try SignedMessage<AccessEvent>.decode(try #require(stored), schema: AccessEvent.schema).payload.kind == .accessRegranted)
            let notification = try #require(try await bed.notifications(count: 1).first)
            #expect(notification.rejection?.reason == "unprocessable")
            let metrics = String(decoding: try await bed.get("/metrics").body, as: UTF8.self)
            #expect(metrics.contains(#"rescind_audit_handling_failures_total{class="content"} 1"#))
            #expect(metrics.contains(#"rescind_audit_messages_rejected_total{reason="unprocessable"} 1"#))
            #expect(try await bed.get("/ready").status == 200)
        }
    }

    @Test("failures are classified by what real PostgreSQL reports: timeouts and lost connections retry, bad values quarantine")
    func classificationOfRealPostgresErrors() async throws {
        try await AuditTestBed.with { bed in
            func failure(_ statements: PostgresQuery...) async -> HandlingFailure? {
                do {
                    try await bed.withConnection { connection in
                        try await connection.transaction { connection in
                            for sql in statements { try await connection.execute(sql) }
                        }
                    }
                    return nil
                } catch {
                    return HandlingFailure.classify(error)
                }
            }
            #expect(await failure("SELECT 1/0") == .content(reason: "unprocessable"))
            #expect(await failure("SELECT \("a\u{0}b")::text") == .content(reason: "unprocessable"))
            #expect(await failure("SELECT \(Int64(1) << 40)::integer") == .content(reason: "unprocessable"))
            #expect(await failure("INSERT INTO audit_chain_heads VALUES (gen_random_uuid(), 1, '\\x00')") == .content(reason: "unprocessable"))
            #expect(await failure("SET LOCAL statement_timeout = 1", "SELECT pg_sleep(1)") == .transient)
            #expect(await failure("SELECT pg_terminate_backend(pg_backend_pid())") == .transient)
            #expect(await failure("SELECT * FROM no_such_table") == .transient)
            #expect(HandlingFailure.classify(CancellationError()) == .transient)
            #expect(HandlingFailure.classify(MessageError.malformed) == .content(reason: "malformed"))
            // No answer within the client-side deadline (RESCIND_DATABASE_TIMEOUT_SECONDS) nor to the
            // probe after it: retried, never quarantined. (A live server keeps a slow statement
            // going, so the real .timedOut needs a frozen cluster: PostgresDeadlineTests.aFrozenServer.)
            let silent = PostgresError(code: .timedOut, message: "PostgreSQL did not answer within 5 s, nor a fresh connection's probe")
            #expect(HandlingFailure.classify(silent) == .transient)
        }
    }

    @Test("a failure that does not depend on the message is retried, shown in /ready and metrics, and bounded by the retry budget")
    func transientFailuresAreRetriedVisiblyAndBounded() async throws {
        // The production budget (10 attempts) with backoff capped at 500 ms instead of 5 s: ~4 s of retrying.
        try await AuditTestBed.with({ $0.kafka.handlingRetry.maximumDelay = .milliseconds(500) }) { bed in
            // Consuming (the group joined) before the fault.
            try await bed.publish(TestFamily().accessEvent(.familyMemberCreated))
            try await bed.eventually("the first entry") { try await bed.count("SELECT count(*) FROM audit_log") == 1 }
            // The operator's mistake, not the message's: a table the handler writes is gone.
            try await bed.withConnection { try await $0.execute("ALTER TABLE processed_events RENAME TO processed_events_away") }
            let stuck = TestFamily().accessEvent(.familyMemberCreated)
            try await bed.publish(stuck)
            try await bed.eventually("not ready while retrying") { try await bed.get("/ready").status == 503 }
            let metrics = String(decoding: try await bed.get("/metrics").body, as: UTF8.self)
            #expect(metrics.contains("rescind_audit_consumer_retrying 1"))
            #expect(metrics.contains(#"rescind_audit_handling_failures_total{class="transient"}"#))
            #expect(!metrics.contains(#"rescind_audit_handling_failures_total{class="transient"} 0"#), "the retries are counted")
            #expect(try await bed.count("SELECT count(*) FROM rejected_messages") == 0)

            // Still failing while the database answers: after the retry budget it is the message's
            // own failure, quarantined (never retried forever), and the partition moves on.
            try await bed.eventually("quarantined by the retry budget", timeout: .seconds(90)) {
                try await bed.count("SELECT count(*) FROM rejected_messages WHERE reason = 'retries_exhausted'") == 1
            }
            try await bed.eventually("ready again") { try await bed.get("/ready").status == 200 }
            try await bed.withConnection { try await $0.execute("ALTER TABLE processed_events_away RENAME TO processed_events") }
            try await Self.expectStillConsuming(bed, entries: 1, within: try await Self.yardstick(bed, messages: 1))
            let notification = try #require(try await bed.notifications(count: 1).first)
            #expect(notification.rejection?.reason == "retries_exhausted")
        }
    }
}
