import Foundation
import RescindObservability
import RescindPostgres
import RescindProtocol
import RescindServiceSupport

/// Restorable records (migration 0023): the ciphertext a delete or an overwrite replaced is kept
/// in `record_versions` for `retention`, the family member's owner alone lists and restores it,
/// and every revocation and rotation re-encrypts it with the live records (`stage` and `swap`),
/// so nothing a revoked or stolen device held opens it afterwards. The janitor deletes versions
/// past `retention` (`purge`).
struct RecordVersionStore: Sendable {
    let pool: PostgresConnectionPool
    /// How long a deleted or overwritten record stays restorable.
    let retention: Duration

    var retentionDays: Int { retention.wholeSeconds / 86_400 }

    /// Keeps the body a delete or overwrite of `recordID` let go of, in the writer's transaction.
    static func keep(
        bodyID: UUID, fmkVersion: Int, of recordID: UUID, in familyMemberID: UUID, kind: RecordVersion.Kind,
        by caller: AuthenticatedDevice, on connection: PostgresConnection
    ) async throws {
        try await connection.execute(
            """
            INSERT INTO record_versions (version_id, family_member_id, record_id, kind, fmk_version, body_id,
                                         by_user_id, by_device_id)
            VALUES (\(UUID()), \(familyMemberID), \(recordID), \(kind.rawValue), \(fmkVersion), \(bodyID),
                    \(caller.userID), \(caller.deviceID))
            """)
    }

    /// Every version the family member keeps, newest first, with its ciphertext (the owner's
    /// client re-encrypts them at a revocation, and opens them to show the trash).
    func list(_ familyMemberID: UUID, by caller: AuthenticatedDevice) async throws -> RecordVersionList {
        try await pool.withConnection { connection in
            let access = try await FamilyMemberAccess.load(familyMemberID, for: caller.userID, on: connection)
            try access.requireOwner()
            let rows = try await connection.query(
                """
                SELECT v.version_id, v.record_id, v.kind, v.fmk_version, b.nonce, b.ciphertext, b.tag, v.created_at,
                       v.by_user_id, v.by_device_id
                FROM record_versions v JOIN record_bodies b USING (body_id)
                WHERE v.family_member_id = \(familyMemberID)
                ORDER BY v.created_at DESC, v.version_id
                """)
            let versions = try rows.map { row in
                let (versionID, recordID, kind, fmkVersion, nonce, ciphertext, tag, createdAt, byUser, byDevice) = try row.decode(
                    UUID.self, UUID.self, String.self, Int.self, Data.self, Data.self, Data.self, Date.self, UUID.self, UUID?.self)
                return RecordVersion(
                    versionID: versionID, recordID: recordID, familyMemberID: familyMemberID,
                    kind: RecordVersion.Kind(rawValue: kind) ?? .overwritten, fmkVersion: fmkVersion, nonce: nonce,
                    ciphertext: ciphertext, tag: tag, createdAt: createdAt, byUserID: byUser, byDeviceID: byDevice)
            }
            return RecordVersionList(versions: versions, retentionDays: retentionDays)
        }
    }

    /// Makes a kept version the record again (the latest, or `request.versionID`): the owner's
    /// alone. A live record it replaces is kept in turn as `overwritten`, so a restore can be
    /// undone. Refused, changing nothing: 403 for anyone but the owner, 422
    /// `record_of_other_family_member`, 404 `no_restorable_version`, 410 `restore_window_passed`.
    func restore(
        _ familyMemberID: UUID, _ recordID: UUID, _ request: RestoreRecordRequest, by caller: AuthenticatedDevice
    ) async throws -> RecordResponse {
        try await pool.transaction { connection in
            let access = try await FamilyMemberAccess.load(familyMemberID, for: caller.userID, lock: true, on: connection)
            try access.requireOwner()
            let elsewhere = try await connection.query(
                """
                SELECT EXISTS (SELECT 1 FROM records WHERE record_id = \(recordID) AND family_member_id <> \(familyMemberID))
                    OR EXISTS (SELECT 1 FROM record_versions
                               WHERE record_id = \(recordID) AND family_member_id <> \(familyMemberID))
                """
            ).first!.decode(Bool.self, column: 0)
            let kept = try await connection.query(
                """
                SELECT version_id, body_id, fmk_version, created_at,
                       created_at < now() - make_interval(secs => \(retention.wholeSeconds))
                FROM record_versions
                WHERE family_member_id = \(familyMemberID) AND record_id = \(recordID)
                  AND (\(request.versionID)::uuid IS NULL OR version_id = \(request.versionID)::uuid)
                ORDER BY created_at DESC, version_id LIMIT 1 FOR UPDATE
                """
            ).first.map { try $0.decode(UUID.self, UUID.self, Int.self, Date.self, Bool.self) }
            try GrantRules.checkRestorable(
                kept: kept.map { (createdAt: $0.3, expired: $0.4) }, elsewhere: elsewhere, retentionDays: retentionDays)
            let (versionID, bodyID, fmkVersion, _, _) = kept!
            try await connection.execute("DELETE FROM record_versions WHERE version_id = \(versionID)")
            if let live = try await connection.query(
                "SELECT body_id, fmk_version FROM records WHERE record_id = \(recordID) FOR UPDATE"
            ).first {
                let (liveBody, liveVersion) = try live.decode(UUID.self, Int.self)
                try await Self.keep(
                    bodyID: liveBody, fmkVersion: liveVersion, of: recordID, in: familyMemberID, kind: .overwritten,
                    by: caller, on: connection)
            }
            let changeSeq = try await connection.query(
                """
                INSERT INTO records (record_id, family_member_id, fmk_version, body_id)
                VALUES (\(recordID), \(familyMemberID), \(fmkVersion), \(bodyID))
                ON CONFLICT (record_id) DO UPDATE
                SET fmk_version = EXCLUDED.fmk_version, body_id = EXCLUDED.body_id,
                    change_seq = nextval('record_change_seq'), updated_at = now()
                RETURNING change_seq
                """
            ).first!.decode(Int64.self, column: 0)
            try await connection.execute(
                "DELETE FROM record_tombstones WHERE record_id = \(recordID) AND family_member_id = \(familyMemberID)")
            let (nonce, ciphertext, tag) = try await connection.query(
                "SELECT nonce, ciphertext, tag FROM record_bodies WHERE body_id = \(bodyID)"
            ).first!.decode(Data.self, Data.self, Data.self)
            return RecordResponse(
                recordID: recordID, familyMemberID: familyMemberID, fmkVersion: fmkVersion, nonce: nonce,
                ciphertext: ciphertext, tag: tag, changeSeq: changeSeq)
        }
    }

    /// Deletes the versions kept longer than `retention`, their bodies with them.
    /// - Returns: how many were deleted.
    @discardableResult
    func purge() async throws -> Int {
        try await pool.transaction { connection in
            try await connection.query(
                """
                WITH gone AS (
                    DELETE FROM record_versions WHERE created_at < now() - make_interval(secs => \(retention.wholeSeconds))
                    RETURNING body_id),
                bodies AS (DELETE FROM record_bodies WHERE body_id IN (SELECT body_id FROM gone) RETURNING 1)
                SELECT (SELECT count(*) FROM gone), (SELECT count(*) FROM bodies)
                """
            ).first!.decode(Int.self, column: 0)
        }
    }

    // MARK: Revocations and rotations

    /// Stages re-encrypted versions for a revocation in progress, in its upload's transaction (the
    /// staging locked by the caller); a version uploaded again replaces its earlier upload.
    static func stage(
        _ versions: [StagedRecordVersion], revocationID: UUID, familyMemberID: UUID, on connection: PostgresConnection
    ) async throws {
        let ids = PostgresArray(versions.map(\.versionID))
        let owned = try await connection.query(
            "SELECT count(*) FROM record_versions WHERE family_member_id = \(familyMemberID) AND version_id = ANY(\(ids))"
        ).first!.decode(Int.self, column: 0)
        try GrantRules.checkVersionBatch(versions.map(\.versionID), owned: owned)
        try await connection.execute(
            """
            WITH replaced AS (
                DELETE FROM staged_record_versions WHERE staging_id = \(revocationID) AND version_id = ANY(\(ids))
                RETURNING body_id)
            DELETE FROM record_bodies WHERE body_id IN (SELECT body_id FROM replaced)
            """)
        for version in versions {
            let bodyID = UUID()
            try await connection.execute(
                """
                INSERT INTO record_bodies (body_id, nonce, ciphertext, tag)
                VALUES (\(bodyID), \(version.nonce), \(version.ciphertext), \(version.tag))
                """)
            try await connection.execute(
                """
                INSERT INTO staged_record_versions (staging_id, version_id, body_id)
                VALUES (\(revocationID), \(version.versionID), \(bodyID))
                """)
        }
    }

    /// In a revocation's commit: points every kept version at its re-encrypted body under
    /// `newVersion` and queues the old bodies; refused (409 `records_changed`) while one is not
    /// re-encrypted. Staged bodies of versions restored or purged meanwhile are queued too.
    /// - Returns: how many versions were re-encrypted.
    static func swap(
        _ revocationID: UUID, familyMemberID: UUID, newVersion: Int, on connection: PostgresConnection
    ) async throws -> Int {
        let (total, unstaged) = try await connection.query(
            """
            SELECT count(*), count(*) FILTER (WHERE s.version_id IS NULL)
            FROM record_versions v
            LEFT JOIN staged_record_versions s ON s.staging_id = \(revocationID) AND s.version_id = v.version_id
            WHERE v.family_member_id = \(familyMemberID)
            """
        ).first!.decode(Int.self, Int.self)
        try GrantRules.checkVersionsStaged(total: total, unstaged: unstaged)
        try await connection.execute(
            """
            INSERT INTO record_body_garbage (body_id)
            SELECT v.body_id FROM record_versions v
            JOIN staged_record_versions s ON s.staging_id = \(revocationID) AND s.version_id = v.version_id
            UNION ALL
            SELECT s.body_id FROM staged_record_versions s
            WHERE s.staging_id = \(revocationID)
              AND NOT EXISTS (SELECT 1 FROM record_versions v WHERE v.version_id = s.version_id)
            """)
        try await connection.execute(
            """
            UPDATE record_versions v SET fmk_version = \(newVersion), body_id = s.body_id
            FROM staged_record_versions s
            WHERE s.staging_id = \(revocationID) AND s.version_id = v.version_id
            """)
        return total
    }

    /// Queues the bodies staged for versions by `stagings`, before they are deleted (abandoned,
    /// expired, or their device retired); their rows go with the stagings.
    static func queueStaged(of stagings: [UUID], on connection: PostgresConnection) async throws {
        try await connection.execute(
            """
            INSERT INTO record_body_garbage (body_id)
            SELECT body_id FROM staged_record_versions WHERE staging_id = ANY(\(PostgresArray(stagings)))
            """)
    }
}
