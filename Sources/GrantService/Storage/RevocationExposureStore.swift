import Foundation
import RescindCrypto
import RescindPostgres
import RescindProtocol

/// Each revocation's exposure report (`revocation_exposures`, migration 0011): taken inside the
/// commit's transaction, sealed to the committing owner, served back to that owner only.
struct RevocationExposureStore: Sendable {
    let pool: PostgresConnectionPool

    /// What the revoked user's devices could hold, sealed to `owner`'s X25519 key and stored.
    ///
    /// Runs inside the commit after the swap and before the staging area is deleted: the swap
    /// gave every record a new change sequence, and `staged_records.source_change_seq` keeps the
    /// one each record had before it — the position scale `device_sync_state` was written in. A
    /// device that synced page by page was given, in change order, every change up to its
    /// position, so the records it holds in their current (pre-revocation) form are exactly those
    /// whose pre-swap change sequence is at or below it. Records edited or created later, and
    /// deletions after it, are counted apart (`changes_since_sync`).
    static func snapshot(
        eventID: UUID, familyMemberID: UUID, revocationID: UUID, revokedUserID: UUID, owner: UUID,
        fromFMKVersion: Int, newFMKVersion: Int, committedAt: Date, on connection: PostgresConnection
    ) async throws {
        let recordsTotal = try await connection.query(
            "SELECT count(*) FROM records WHERE family_member_id = \(familyMemberID)"
        ).first!.decode(Int.self, column: 0)
        var devices: [RevocationExposure.Device] = []
        // One join of the records with their staged copies (no nested loop: statistics taken when
        // the tables were nearly empty would make it quadratic, as for the swap), then a scan of
        // that list per device.
        try await connection.execute("SET LOCAL enable_nestloop = off")
        let rows = try await connection.query(
            """
            WITH swapped AS MATERIALIZED (
                SELECT st.source_change_seq AS seq FROM records r
                JOIN staged_records st ON st.staging_id = \(revocationID) AND st.record_id = r.record_id
                WHERE r.family_member_id = \(familyMemberID))
            SELECT d.device_id, d.name, d.role, d.retired_at, s.fmk_version, s.change_seq, s.fetched_at,
                   (SELECT count(*) FROM swapped WHERE seq <= s.change_seq),
                   (SELECT count(*) FROM swapped WHERE seq > coalesce(s.change_seq, -1))
                   + (SELECT count(*) FROM record_tombstones t
                      WHERE t.family_member_id = \(familyMemberID) AND t.change_seq > coalesce(s.change_seq, -1)
                        AND s.device_id IS NOT NULL)
            FROM devices d
            LEFT JOIN device_sync_state s ON s.device_id = d.device_id AND s.family_member_id = \(familyMemberID)
            WHERE d.user_id = \(revokedUserID)
            ORDER BY d.registered_at, d.device_id
            """)
        try await connection.execute("SET LOCAL enable_nestloop = on")
        for row in rows {
            let (device, name, role, retiredAt, version, changeSeq, fetchedAt, fetched, since) = try row.decode(
                UUID.self, String.self, String.self, Date?.self, Int?.self, Int64?.self, Date?.self, Int.self, Int.self)
            let deviceRole = DeviceRole(rawValue: role) ?? .agent
            devices.append(
                RevocationExposure.Device(
                    deviceID: device, name: name, role: deviceRole, retiredAt: retiredAt,
                    // The commit's own choice (`expectedDevices`): active agents of the revoked user erase.
                    commanded: deviceRole == .agent && retiredAt == nil, fmkVersion: version, changeSeq: changeSeq,
                    lastSyncAt: fetchedAt, recordsFetched: changeSeq == nil ? 0 : fetched,
                    changesSinceSync: fetchedAt == nil ? 0 : since))
        }
        let report = RevocationExposure(
            eventID: eventID, familyMemberID: familyMemberID, revokedUserID: revokedUserID, ownerUserID: owner,
            fromFMKVersion: fromFMKVersion, newFMKVersion: newFMKVersion, recordsTotal: recordsTotal,
            committedAt: committedAt, devices: devices)
        let ownerKey = try await connection.query("SELECT agreement_public_key FROM users WHERE user_id = \(owner)")
            .first!.decode([UInt8].self, column: 0)
        let sealed = try AnonymousSealedBox.seal(
            [UInt8](try CanonicalJSON.encode(report)), to: try X25519.PublicKey(rawRepresentation: ownerKey))
        try await connection.execute(
            """
            INSERT INTO revocation_exposures (event_id, family_member_id, sealed_to_user_id, sealed_report)
            VALUES (\(eventID), \(familyMemberID), \(owner), \(Data(sealed)))
            """)
    }

    /// Whether `eventID` is a rotation (it revoked nobody, so no report was taken) that `userID`
    /// committed. Anyone else learns nothing of the event.
    func isRotation(_ eventID: UUID, committedBy userID: UUID) async throws -> Bool {
        try await pool.withConnection { connection in
            try await !connection.query(
                """
                SELECT 1 FROM revocation_events
                WHERE event_id = \(eventID) AND revoked_by_user_id = \(userID) AND revoked_user_id IS NULL
                """
            ).isEmpty
        }
    }

    /// The sealed report of `eventID`, for the owner it is sealed to; anyone else (or an unknown
    /// event, or a revocation committed before reports were kept) gets the same 404.
    func sealedReport(_ eventID: UUID, for userID: UUID) async throws -> SealedRevocationExposure? {
        try await pool.withConnection { connection in
            try await connection.query(
                """
                SELECT family_member_id, sealed_report, created_at FROM revocation_exposures
                WHERE event_id = \(eventID) AND sealed_to_user_id = \(userID)
                """
            ).first.map { row in
                let (familyMemberID, sealed, createdAt) = try row.decode(UUID.self, Data.self, Date.self)
                return SealedRevocationExposure(
                    eventID: eventID, familyMemberID: familyMemberID, sealedToUserID: userID, sealedReport: sealed,
                    createdAt: createdAt)
            }
        }
    }
}
