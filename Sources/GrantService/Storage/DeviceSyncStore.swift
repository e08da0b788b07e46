import Foundation
import RescindPostgres
import RescindProtocol

/// Each device's last check-in per family member (`device_sync_state`, migration 0008): the
/// FMK version of the last key it fetched and the furthest change-feed position it was given.
///
/// Written after a fetch was answered, never before (a refused fetch notes nothing), by one
/// upsert that leaves the row alone unless the version or the position moved or the row is a
/// minute old: a device polling an unchanged family member writes at most once a minute.
struct DeviceSyncStore: Sendable {
    let pool: PostgresConnectionPool

    /// The device was handed its wrapped FMK at `fmkVersion`.
    func noteKeyFetched(deviceID: UUID, familyMemberID: UUID, fmkVersion: Int) async throws {
        try await pool.withConnection { connection in
            _ = try await connection.execute(
                """
                INSERT INTO device_sync_state AS s (device_id, family_member_id, fmk_version)
                VALUES (\(deviceID), \(familyMemberID), \(fmkVersion))
                ON CONFLICT (device_id, family_member_id) DO UPDATE
                SET fmk_version = EXCLUDED.fmk_version, fetched_at = now()
                WHERE s.fmk_version <> EXCLUDED.fmk_version OR s.fetched_at < now() - interval '1 minute'
                """)
        }
    }

    /// The device was handed a page of the change feed whose last change is `changeSeq` (nil:
    /// the page held no change, so no position moves). A device that never fetched the key is
    /// entered at `ciphertextVersion`, the version every record on the page is under.
    func notePageRead(deviceID: UUID, familyMemberID: UUID, changeSeq: Int64?, ciphertextVersion: Int) async throws {
        try await pool.withConnection { connection in
            _ = try await connection.execute(
                """
                INSERT INTO device_sync_state AS s (device_id, family_member_id, fmk_version, change_seq)
                VALUES (\(deviceID), \(familyMemberID), \(ciphertextVersion), \(changeSeq))
                ON CONFLICT (device_id, family_member_id) DO UPDATE
                SET change_seq = greatest(s.change_seq, EXCLUDED.change_seq), fetched_at = now()
                WHERE EXCLUDED.change_seq > coalesce(s.change_seq, -1) OR s.fetched_at < now() - interval '1 minute'
                """)
        }
    }

    /// Every device of `userID`'s last check-ins, by device, oldest family member first.
    func states(ofUser userID: UUID) async throws -> [UUID: [DeviceSyncState]] {
        try await pool.withConnection { connection in
            var states: [UUID: [DeviceSyncState]] = [:]
            for row in try await connection.query(
                """
                SELECT s.device_id, s.family_member_id, s.fmk_version, s.change_seq, s.fetched_at
                FROM device_sync_state s JOIN devices d USING (device_id)
                WHERE d.user_id = \(userID)
                ORDER BY s.device_id, s.fetched_at, s.family_member_id
                """)
            {
                let (device, familyMember, version, changeSeq, fetchedAt) = try row.decode(
                    UUID.self, UUID.self, Int.self, Int64?.self, Date.self)
                states[device, default: []].append(
                    DeviceSyncState(familyMemberID: familyMember, fmkVersion: version, changeSeq: changeSeq, fetchedAt: fetchedAt))
            }
            return states
        }
    }
}
