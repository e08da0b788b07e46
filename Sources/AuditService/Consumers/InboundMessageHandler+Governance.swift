import Foundation
import RescindPostgres
import RescindProtocol

extension InboundMessageHandler {
    /// A governance notice the grant service published on `access_events` (keyed by user): kept
    /// once per notice id, announced as `governance_notice` on `audit_notifications` and on the
    /// stream (the monitoring page's "changes to who a user is"). The audit copy names no device:
    /// one addressed to a device has no business on this topic and is refused as `misaddressed`.
    func governanceNotice(_ bytes: Data?, on connection: PostgresConnection, into conclusions: inout Conclusions) async throws {
        let notice = try verifiedGrantMessage(bytes, schema: GovernanceNotice.schema, as: GovernanceNotice.self).payload
        guard notice.deviceID == nil else { throw Rejection("misaddressed", signer: "grant-service") }
        let stored = try await connection.execute(
            """
            INSERT INTO governance_notices (notice_id, user_id, change, state, occurred_at, notice)
            VALUES (\(notice.noticeID), \(notice.userID), \(notice.change.rawValue), \(notice.state.rawValue), \(notice.occurredAt),
                    \(PostgresJSON(bytes: [UInt8](try CanonicalJSON.encode(notice)))))
            ON CONFLICT (notice_id) DO NOTHING
            """)
        guard stored == 1 else { return }
        try conclusions.notify(
            AuditNotification(
                notificationID: UUID(), kind: .governanceNotice, familyMemberID: notice.familyMemberID, eventID: nil,
                deviceID: notice.actorDeviceID, governance: notice, occurredAt: notice.occurredAt))
    }

    /// The notices of one user (an owner's credential), or of everyone (the operator), newest first.
    static func governanceNotices(of userID: UUID?, limit: Int, on connection: PostgresConnection) async throws -> [GovernanceNotice] {
        try await connection.query(
            """
            SELECT notice FROM governance_notices WHERE (\(userID)::uuid IS NULL OR user_id = \(userID))
            ORDER BY occurred_at DESC, received_at DESC LIMIT \(limit)
            """
        ).map { try $0.decode(PostgresJSON.self, column: 0).decode(GovernanceNotice.self, decoder: CanonicalJSON.decoder()) }
    }
}
