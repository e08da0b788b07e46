import Foundation
import RescindCrypto
import RescindPostgres
import RescindProtocol

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
    func write(_ conclusions: Conclusions, on connection: PostgresConnection) async throws {
        for notification in conclusions.notifications {
            let envelope = try SignedMessage(
                schema: AuditNotification.schema, signer: AuditNotification.signer, payload: notification,
                key: signingKey
            ).encoded()
            try await connection.execute(
                """
                INSERT INTO notification_outbox (notification_id, family_member_id, kind, envelope)
                VALUES (\(notification.notificationID), \(notification.familyMemberID), \(notification.kind.rawValue),
                        \(envelope))
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
}
