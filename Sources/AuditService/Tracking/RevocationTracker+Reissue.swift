import Foundation
import RescindPostgres
import RescindProtocol
import RescindTracing
import Tracing

extension RevocationTracker {
    /// How re-issues are paced: a device that failed, went overdue or did not answer a
    /// re-issue is sent a new command after `backoff × 2^(attempts − 1)`, up to `attempts`
    /// commands in all; after that it is `expired` (an answer still moves it on).
    struct ReissuePolicy: Sendable {
        /// Commands in all, the grant service's included (1 turns re-issuing off).
        var attempts: Int
        var backoff: Duration
    }

    /// Re-issues the commands of failed, overdue and unanswered re-issued devices of open
    /// revocations whose backoff has passed, and expires those out of attempts. Each re-issue is
    /// signed into the outbox (published on `device_commands`) in this transaction; the state
    /// change is the guard against a second scan.
    func reissue(_ policy: ReissuePolicy, on connection: PostgresConnection, into conclusions: inout Conclusions) async throws {
        let due = """
            coalesce(d.ack_received_at, d.state_changed_at, d.overdue_at, r.committed_at)
                <= now() - make_interval(secs => \(policy.backoff.seconds) * power(2, d.attempts - 1))
            """
        let expired = try await connection.query(
            """
            UPDATE revocation_devices d SET state = 'expired', state_changed_at = now()
            FROM revocations r
            WHERE d.event_id = r.event_id AND r.completed_at IS NULL AND d.state IN ('failed', 'overdue', 'reissued')
              AND d.attempts >= \(policy.attempts) AND \(unescaped: due)
            RETURNING d.event_id
            """
        ).map { try $0.decode(UUID.self, column: 0) }
        let rows = try await connection.query(
            """
            UPDATE revocation_devices d
            SET state = 'reissued', attempts = d.attempts + 1, state_changed_at = now(), ack_received_at = NULL
            FROM revocations r
            WHERE d.event_id = r.event_id AND r.completed_at IS NULL AND d.state IN ('failed', 'overdue', 'reissued')
              AND d.attempts < \(policy.attempts) AND \(unescaped: due)
            RETURNING d.event_id, d.device_id, d.attempts,
                      (SELECT coalesce(a.original_command_id, a.command_id) FROM device_acks a WHERE a.ack_id = d.ack_id),
                      r.traceparent, r.tracestate
            """
        ).map { try $0.decode(UUID.self, UUID.self, Int.self, UUID?.self, String?.self, String?.self) }
        for (eventID, deviceID, attempt, original, traceparent, tracestate) in rows {
            let reissue = CommandReissue(
                reissueID: UUID(), eventID: eventID, deviceID: deviceID, originalCommandID: original, attempt: attempt,
                issuedAt: Timestamp.truncated(Date()))
            let trace = Self.traceReissue(attempt: attempt, revocation: traceparent.flatMap { TraceContext(traceparent: $0, tracestate: tracestate) })
            try await connection.execute(
                """
                INSERT INTO command_reissues (reissue_id, event_id, device_id, original_command_id, attempt, issued_at)
                VALUES (\(reissue.reissueID), \(eventID), \(deviceID), \(original), \(attempt), \(reissue.issuedAt))
                """)
            conclusions.reissues.append((reissue, trace))
        }
        for eventID in Set(expired + rows.map(\.0)).sorted(by: { $0.uuidString < $1.uuidString }) {
            try await Self.streamStatus(of: eventID, on: connection, into: &conclusions)
        }
    }

    /// A re-issue of a traced revocation starts a trace of its own (the scan is not part of the
    /// revocation's work, and may run hours later), with a `command reissued` span linked to the
    /// revocation's trace; the device's handling and ack continue the new trace. Untraced
    /// revocations, or tracing off, give `nil`.
    static func traceReissue(attempt: Int, revocation: TraceContext?) -> TraceContext? {
        guard let revocation, let linked = ServiceContext.continuing(revocation) else { return nil }
        let span = InstrumentationSystem.tracer.startAnySpan("command reissued", context: .topLevel, ofKind: .internal)
        span.addLink(SpanLink(context: linked, attributes: [:]))
        span.attributes["rescind.attempt"] = attempt
        defer { span.end() }
        return span.context.traceContext
    }
}
