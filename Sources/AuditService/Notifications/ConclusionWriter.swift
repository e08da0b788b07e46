import Foundation
import RescindCrypto
import RescindPostgres
import RescindProtocol
import RescindTracing
import Tracing

/// Writes a transaction's conclusions at its end: signed notifications and command re-issues
/// into the outbox (the relay publishes them after commit) and events for the live stream.
struct ConclusionWriter: Sendable {
    /// NOTIFY channels: the relay wakes on the first, the stream hub on the second.
    static let outboxChannel = "rescind_audit_outbox"
    static let streamChannel = "rescind_audit_stream"
    /// Serializes stream inserts until commit, so stream ids become visible in id order
    /// and a reader that remembers the last id it saw never skips one.
    static let streamLock: Int64 = 0x5253_4E44_5354_524D

    let signingKey: Ed25519.PrivateKey

    /// Call last in the transaction (the stream lock is held until commit).
    ///
    /// A notification is published in the trace of the message that concluded it (`ack recorded`
    /// for a revocation's completion), or else in its revocation's (an overdue ack the deadline
    /// monitor found): watchers of `audit_notifications` follow it to the revocation's trace.
    func write(_ conclusions: Conclusions, on connection: PostgresConnection) async throws {
        let current = ServiceContext.current?.traceContext
        for notification in conclusions.notifications {
            let envelope = try SignedMessage(
                schema: AuditNotification.schema, signer: AuditNotification.signer, payload: notification,
                key: signingKey
            ).encoded()
            var trace = current
            if trace == nil { trace = try await Self.revocationTrace(notification.eventID, on: connection) }
            try await connection.execute(
                """
                INSERT INTO notification_outbox (notification_id, family_member_id, kind, envelope, traceparent, tracestate)
                VALUES (\(notification.notificationID), \(notification.familyMemberID), \(notification.kind.rawValue),
                        \(envelope), \(trace?.traceparent), \(trace?.storableTraceState))
                """)
        }
        for (reissue, trace) in conclusions.reissues {
            let envelope = try SignedMessage(
                schema: CommandReissue.schema, signer: CommandReissue.signer, payload: reissue, key: signingKey
            ).encoded()
            try await connection.execute(
                """
                INSERT INTO notification_outbox (notification_id, kind, envelope, destination, message_key, traceparent, tracestate)
                VALUES (\(reissue.reissueID), 'command_reissue', \(envelope), 'device_commands', \(reissue.deviceID),
                        \(trace?.traceparent), \(trace?.storableTraceState))
                """)
        }
        if !conclusions.notifications.isEmpty || !conclusions.reissues.isEmpty {
            try await connection.execute("SELECT pg_notify(\(Self.outboxChannel), '')")
        }
        guard !conclusions.streamEvents.isEmpty else { return }
        try await connection.execute("SELECT pg_advisory_xact_lock(\(Self.streamLock))")
        for event in conclusions.streamEvents {
            try await connection.execute(
                """
                INSERT INTO stream_events (family_member_id, type, data)
                VALUES (\(event.familyMemberID), \(event.kind.rawValue), \(event.data))
                """)
        }
        try await connection.execute("SELECT pg_notify(\(Self.streamChannel), '')")
    }

    /// The trace context the revocation `eventID` was recorded under, if any.
    private static func revocationTrace(_ eventID: UUID?, on connection: PostgresConnection) async throws -> TraceContext? {
        guard let eventID,
            let row = try await connection.query("SELECT traceparent, tracestate FROM revocations WHERE event_id = \(eventID)").first
        else { return nil }
        let (traceparent, tracestate) = try row.decode(String?.self, String?.self)
        return traceparent.flatMap { TraceContext(traceparent: $0, tracestate: tracestate) }
    }
}
