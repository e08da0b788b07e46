import Foundation
import RescindCrypto
import RescindPostgres
import RescindProtocol

/// The facts of a tracked revocation that later steps (acks, deadlines, completion) need.
struct RevocationRecord: Sendable {
    var eventID: UUID
    var familyMemberID: UUID
    var owner: X25519.PublicKey
    var revokedUserID: UUID?
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
            UUID.self, [UInt8].self, UUID?.self, UUID.self, Int.self, Date.self, Date.self, Date?.self)
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
                    UUID.self, UUID.self, UUID?.self, UUID.self, Int.self, Int.self, Date.self, Date.self, Date?.self,
                    Int?.self)
            let history = try await Self.history(of: eventID, committedAt: committedAt, on: connection)
            let devices = try await connection.query(
                """
                SELECT device_id, user_id, action, state, acked_at, late, error, attempts FROM revocation_devices
                WHERE event_id = \(eventID) ORDER BY user_id, device_id
                """
            ).map { row in
                let (device, user, action, state, ackedAt, late, error, attempts) = try row.decode(
                    UUID.self, UUID.self, DeviceAction.self, String.self, Date?.self, Bool.self, String?.self, Int.self)
                return RevocationStatus.Device(
                    deviceID: device, userID: user, action: action, state: state, ackedAt: ackedAt, late: late,
                    error: error, attempts: attempts, history: history[device] ?? [])
            }
            statuses.append(
                RevocationStatus(
                    eventID: eventID, familyMemberID: familyMemberID, revokedUserID: revoked, revokedByUserID: revokedBy,
                    newFMKVersion: version, recordsReencrypted: records, committedAt: committedAt,
                    deadlineAt: deadlineAt, completedAt: completedAt, commitToLastAckMs: took, devices: devices))
        }
        return statuses
    }

    /// Each device's lifecycle, oldest first: issued at the commit, every verified receipt and
    /// answer (device clocks), and the moment it was found overdue (server clock).
    static func history(
        of eventID: UUID, committedAt: Date, on connection: PostgresConnection
    ) async throws -> [UUID: [RevocationStatus.Step]] {
        var history: [UUID: [RevocationStatus.Step]] = [:]
        for row in try await connection.query(
            "SELECT device_id, overdue_at FROM revocation_devices WHERE event_id = \(eventID)")
        {
            let (device, overdueAt) = try row.decode(UUID.self, Date?.self)
            history[device] = [RevocationStatus.Step(state: "issued", at: committedAt, attempt: 1)]
            if let overdueAt { history[device]?.append(RevocationStatus.Step(state: "overdue", at: overdueAt)) }
        }
        for row in try await connection.query(
            """
            SELECT device_id, outcome, acked_at, command_id, coalesce(attempt, 1), error FROM device_acks
            WHERE event_id = \(eventID) ORDER BY acked_at, received_at
            """)
        {
            let (device, outcome, at, commandID, attempt, error) = try row.decode(
                UUID.self, String.self, Date.self, UUID.self, Int.self, String?.self)
            history[device, default: []].append(
                RevocationStatus.Step(state: outcome, at: at, commandID: commandID, attempt: attempt, error: error))
        }
        for row in try await connection.query(
            "SELECT device_id, reissue_id, attempt, issued_at FROM command_reissues WHERE event_id = \(eventID)")
        {
            let (device, reissueID, attempt, at) = try row.decode(UUID.self, UUID.self, Int.self, Date.self)
            history[device, default: []].append(
                RevocationStatus.Step(state: "reissued", at: at, commandID: reissueID, attempt: attempt))
        }
        return history.mapValues { $0.sorted { $0.at < $1.at } }
    }
}
