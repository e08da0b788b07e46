import Foundation
import RescindCrypto
import RescindPostgres
import RescindProtocol

/// The facts of a tracked revocation that later steps (acks, deadlines, completion) need.
struct RevocationRecord: Sendable {
    var eventID: UUID
    var familyMemberID: UUID
    var owner: X25519.PublicKey
    var revokedUserID: UUID
    var revokedByUserID: UUID
    var newFMKVersion: Int
    var committedAt: Date
    var deadlineAt: Date
    var completedAt: Date?

    static func load(_ eventID: UUID, lock: Bool = false, on connection: PostgresConnection) async throws -> RevocationRecord? {
        let rows = try await connection.query(
            """
            SELECT family_member_id, owner_agreement_public_key, revoked_user_id, revoked_by_user_id,
                   new_fmk_version, committed_at, deadline_at, completed_at
            FROM revocations WHERE event_id = \(eventID) \(unescaped: lock ? "FOR UPDATE" : "")
            """)
        guard let row = rows.first else { return nil }
        let (familyMemberID, owner, revoked, revokedBy, version, committedAt, deadlineAt, completedAt) = try row.decode(
            UUID.self, [UInt8].self, UUID.self, UUID.self, Int.self, Date.self, Date.self, Date?.self)
        return RevocationRecord(
            eventID: eventID, familyMemberID: familyMemberID, owner: try X25519.PublicKey(rawRepresentation: owner),
            revokedUserID: revoked, revokedByUserID: revokedBy, newFMKVersion: version, committedAt: committedAt,
            deadlineAt: deadlineAt, completedAt: completedAt)
    }

    /// The state the monitoring page and the API show.
    static func status(_ eventID: UUID, on connection: PostgresConnection) async throws -> RevocationStatus? {
        try await statuses(eventID: eventID, familyMemberID: nil, limit: 1, on: connection).first
    }

    /// Revocations (one, or those of a family member, or all), newest commit first, with their
    /// devices; with `ownerUserID`, only those of family members that user owns now; with
    /// `deviceState`, only those with a device in that state.
    static func statuses(
        eventID: UUID?, familyMemberID: UUID?, ownerUserID: UUID? = nil, deviceState: String? = nil, limit: Int,
        on connection: PostgresConnection
    ) async throws -> [RevocationStatus] {
        var statuses: [RevocationStatus] = []
        let rows = try await connection.query(
            """
            SELECT r.event_id, r.family_member_id, r.revoked_user_id, r.revoked_by_user_id, r.new_fmk_version,
                   r.records_reencrypted, r.committed_at, r.deadline_at, r.completed_at, r.commit_to_last_ack_ms
            FROM revocations r
            WHERE (\(eventID)::uuid IS NULL OR r.event_id = \(eventID))
              AND (\(familyMemberID)::uuid IS NULL OR r.family_member_id = \(familyMemberID))
              AND (\(ownerUserID)::uuid IS NULL OR r.family_member_id IN (
                    SELECT f.family_member_id FROM family_members f WHERE f.owner_user_id = \(ownerUserID)))
              AND (\(deviceState)::text IS NULL OR EXISTS (
                    SELECT 1 FROM revocation_devices d WHERE d.event_id = r.event_id AND d.state = \(deviceState)))
            ORDER BY r.committed_at DESC, r.event_id LIMIT \(limit)
            """)
        for row in rows {
            let (eventID, familyMemberID, revoked, revokedBy, version, records, committedAt, deadlineAt, completedAt, took) =
                try row.decode(
                    UUID.self, UUID.self, UUID.self, UUID.self, Int.self, Int.self, Date.self, Date.self, Date?.self,
                    Int?.self)
            let devices = try await connection.query(
                """
                SELECT device_id, user_id, action, state, acked_at, late, error FROM revocation_devices
                WHERE event_id = \(eventID) ORDER BY user_id, device_id
                """
            ).map { row in
                let (device, user, action, state, ackedAt, late, error) = try row.decode(
                    UUID.self, UUID.self, DeviceAction.self, String.self, Date?.self, Bool.self, String?.self)
                return RevocationStatus.Device(
                    deviceID: device, userID: user, action: action, state: state, ackedAt: ackedAt, late: late,
                    error: error)
            }
            statuses.append(
                RevocationStatus(
                    eventID: eventID, familyMemberID: familyMemberID, revokedUserID: revoked, revokedByUserID: revokedBy,
                    newFMKVersion: version, recordsReencrypted: records, committedAt: committedAt,
                    deadlineAt: deadlineAt, completedAt: completedAt, commitToLastAckMs: took, devices: devices))
        }
        return statuses
    }
}
