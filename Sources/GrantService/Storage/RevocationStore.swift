import Foundation
import RescindPostgres
import RescindProtocol

/// Large, atomic revocations: begin → upload re-encrypted records in batches
/// into a staging area → commit everything in one transaction.
struct RevocationStore: Sendable {
    let pool: PostgresConnectionPool
    let families: FamilyMemberStore
    let outbox: OutboxWriter
    let stagingLifetime: Duration

    // MARK: Begin

    func begin(_ familyMemberID: UUID, by caller: AuthenticatedDevice, _ request: BeginRevocationRequest) async throws -> RevocationResponse {
        try GrantRules.checkReason(request.reason)
        return try await pool.transaction { connection in
            let access = try await FamilyMemberAccess.load(familyMemberID, for: caller.userID, lock: true, on: connection)
            try access.requireOwner()
            return try await begin(access, revoking: request.revokedUserID, reason: request.reason, by: caller, on: connection)
        }
    }

    /// Stolen device: one revocation per family member the caller owns that the user can read.
    func beginForUser(
        _ revokedUserID: UUID, by caller: AuthenticatedDevice, _ request: BeginUserRevocationRequest
    ) async throws -> [RevocationResponse] {
        try GrantRules.checkReason(request.reason)
        let owner = caller.userID
        return try await pool.transaction { connection in
            let userExists = try await families.agreementKey(of: revokedUserID, on: connection) != nil
            let familyMemberIDs = try await connection.query(
                """
                SELECT f.family_member_id FROM family_members f JOIN access_grants g USING (family_member_id)
                WHERE f.owner_user_id = \(owner) AND g.grantee_user_id = \(revokedUserID) AND g.revoked_at IS NULL
                ORDER BY f.family_member_id FOR UPDATE OF f
                """
            ).map { try $0.decode(UUID.self, column: 0) }
            try GrantRules.checkRevocableEverywhere(userExists: userExists, familyMembersShared: familyMemberIDs.count)
            var revocations: [RevocationResponse] = []
            for familyMemberID in familyMemberIDs {
                let access = try await FamilyMemberAccess.load(familyMemberID, for: owner, lock: true, on: connection)
                revocations.append(
                    try await begin(access, revoking: revokedUserID, reason: request.reason, by: caller, on: connection))
            }
            return revocations
        }
    }

    /// The owner's stolen device: a rotation that revokes nobody. The same staging, upload and
    /// commit as a revocation with no revoked user: a new FMK for exactly the users who hold the
    /// current one, every record re-encrypted, every holder's agent devices told to rotate.
    func beginRotation(_ familyMemberID: UUID, by caller: AuthenticatedDevice, _ request: BeginRotationRequest) async throws -> RevocationResponse {
        try GrantRules.checkReason(request.reason)
        return try await pool.transaction { connection in
            let access = try await FamilyMemberAccess.load(familyMemberID, for: caller.userID, lock: true, on: connection)
            try access.requireOwner()
            return try await begin(access, revoking: nil, reason: request.reason, by: caller, on: connection)
        }
    }

    /// `revokedUserID` nil: a rotation that revokes nobody. The staging belongs to the calling
    /// device (migration 0017): only it continues, commits or abandons it.
    private func begin(
        _ access: FamilyMemberAccess, revoking revokedUserID: UUID?, reason: String?, by caller: AuthenticatedDevice,
        on connection: PostgresConnection
    ) async throws -> RevocationResponse {
        if let revokedUserID { try await checkRevocable(revokedUserID, from: access, on: connection) }
        // The device must still be active, read under a key-share lock: a retirement running now
        // (it locks the device row for update) either commits first — then this begin is refused,
        // as the device's next call would be — or waits for this begin and then abandons the
        // staging it made. Either way no staging outlives its device's retirement.
        try await Staging.requireActiveDevice(caller, on: connection)
        // The ids in id order are a sort since migration 0015 (no index on both): in memory up to
        // ~300,000 records (100,000 spilled to disk past the default 4 MB: 113 ms instead of ~30).
        try await connection.execute("SET LOCAL work_mem = '32MB'")
        let recordIDs = try await connection.query(
            "SELECT record_id FROM records WHERE family_member_id = \(access.familyMemberID) ORDER BY record_id"
        ).map { try $0.decode(UUID.self, column: 0) }
        let revocationID = UUID()
        // The family member's last change so far: a record above it at commit time was
        // written after this revocation began (the row lock serialises every writer).
        let expiresAt = try await connection.query(
            """
            INSERT INTO revocation_stagings (staging_id, family_member_id, revoked_user_id, started_by_user_id,
                                             started_by_device_id, from_fmk_version, reason, expected_count,
                                             begin_change_seq, expires_at)
            VALUES (\(revocationID), \(access.familyMemberID), \(revokedUserID), \(caller.userID), \(caller.deviceID),
                    \(access.currentFMKVersion),
                    \(reason), \(recordIDs.count),
                    (SELECT coalesce(max(change_seq), 0) FROM records WHERE family_member_id = \(access.familyMemberID)),
                    now() + make_interval(secs => \(stagingLifetime.wholeSeconds)))
            RETURNING expires_at
            """
        ).first!.decode(Date.self, column: 0)
        let remaining = try await connection.query(
            """
            SELECT u.user_id, u.display_name, u.agreement_public_key, u.identity_public_key, u.identity_generation,
                   u.recovery_public_key, u.recovery_binding
            FROM access_grants g JOIN users u ON u.user_id = g.grantee_user_id
            WHERE g.family_member_id = \(access.familyMemberID) AND g.revoked_at IS NULL
              AND g.grantee_user_id IS DISTINCT FROM \(revokedUserID)::uuid
            ORDER BY u.user_id
            """
        ).map(IdentityStore.decodeUser)
        return RevocationResponse(
            revocationID: revocationID, familyMemberID: access.familyMemberID, revokedUserID: revokedUserID,
            fromFMKVersion: access.currentFMKVersion, newFMKVersion: access.currentFMKVersion + 1,
            recordIDs: recordIDs, remainingGrantees: remaining, expiresAt: expiresAt)
    }

    /// `GrantRules.checkRevocable` for `begin` and `preview` alike.
    private func checkRevocable(
        _ revokedUserID: UUID, from access: FamilyMemberAccess, on connection: PostgresConnection
    ) async throws {
        // The owner is refused before anything else is read.
        if revokedUserID == access.ownerUserID {
            try GrantRules.checkRevocable(revokedUserID, ownerUserID: access.ownerUserID, hasActiveAccess: true)
        }
        let target = try await FamilyMemberAccess.load(access.familyMemberID, for: revokedUserID, on: connection)
        let hasActiveAccess = if case .active = target.standing { true } else { false }
        try GrantRules.checkRevocable(revokedUserID, ownerUserID: access.ownerUserID, hasActiveAccess: hasActiveAccess)
    }

    // MARK: Preview

    /// What revoking `revokedUserID` would do now, changing nothing: who loses access, how many
    /// records would be re-encrypted (the kept versions counted with them), and the devices the commit would command (`expectedDevices`,
    /// the commit's own query). The owner's alone; refused as `begin` would refuse it.
    func preview(_ familyMemberID: UUID, revoking revokedUserID: UUID, by owner: UUID) async throws -> RevocationPreview {
        try await pool.transaction { connection in
            let access = try await FamilyMemberAccess.load(familyMemberID, for: owner, on: connection)
            try access.requireOwner()
            try await checkRevocable(revokedUserID, from: access, on: connection)
            let (name, recordCount) = try await connection.query(
                """
                SELECT u.display_name, (SELECT count(*) FROM records WHERE family_member_id = \(familyMemberID))
                                       + (SELECT count(*) FROM record_versions WHERE family_member_id = \(familyMemberID))
                FROM users u WHERE u.user_id = \(revokedUserID)
                """
            ).first!.decode(String.self, Int.self)
            let devices = try await expectedDevices(familyMemberID, revoking: revokedUserID, on: connection)
            return RevocationPreview(
                familyMemberID: familyMemberID, revokedUserID: revokedUserID, revokedUserDisplayName: name,
                recordCount: recordCount,
                devices: devices.map {
                    RevocationPreview.Device(
                        deviceID: $0.device.deviceID, userID: $0.device.userID, userDisplayName: $0.userDisplayName,
                        name: $0.name, action: $0.device.action)
                })
        }
    }

    // MARK: Upload

    /// Stages a batch; a record uploaded again replaces its earlier upload. Batches may arrive in
    /// any order and several at once (the client keeps `UserSession.uploadsInFlight` in flight).
    /// A batch sent again after its answer (a retry) is idempotent: it replaces its own earlier
    /// upload. Two uploads of the same record racing in one revocation are refused for the one
    /// that loses (409 `upload_in_flight`, nothing of it kept); retrying it then replaces the other's.
    func upload(_ revocationID: UUID, by caller: AuthenticatedDevice, _ request: UploadBatchRequest) async throws -> UploadBatchResponse {
        for record in request.records { try RecordStore.validate(nonce: record.nonce, tag: record.tag) }
        try GrantRules.checkBatch(request.records.map(\.recordID))
        return try await pool.transaction { connection in
            // Key-share lock: a commit or abandon (which locks the row for update) waits for the
            // uploads in flight, and concurrent uploads of one revocation do not wait for each other.
            // It also keeps the staging there until this transaction ends, which is what lets the
            // narrow rows below go without a foreign key (migration 0015).
            let staging = try await Staging.load(revocationID, by: caller, lock: .keyShare, on: connection)
            let ids = PostgresArray(request.records.map(\.recordID))
            // A record uploaded again replaces its earlier upload: delete first (with the body it
            // staged, which nothing else refers to), then COPY the bodies into `record_bodies` (their
            // only write: the commit points the records at them), then the narrow staging rows
            // naming them, in the statement that counts them (one statement, no COPY: 500 short rows).
            // A record deleted since it was downloaded is still this family member's (its
            // tombstone says so): staging it is harmless, the commit does not bring it back.
            // Both lookups go by primary key, one probe per record of the batch. Given the staging id
            // and the batch as a list, PostgreSQL scanned every row staged so far and tested each
            // against the batch (67,000 rows, 166 ms, for one batch late in a 100,000-record
            // upload: quadratic in the batches); given the family member and the batch, every record
            // of the family member (10 ms per batch at 10,000 records once migration 0015 dropped
            // the index on both). An equality on the whole unique key is always one index probe.
            let (owned, replaced) = try await connection.query(
                """
                WITH earlier AS MATERIALIZED (
                    SELECT (SELECT s.ctid FROM staged_records s WHERE s.staging_id = \(revocationID) AND s.record_id = u.id) AS found
                    FROM unnest(\(ids)) AS u (id)),
                replaced AS (
                    DELETE FROM staged_records WHERE ctid = ANY(ARRAY(SELECT found FROM earlier)) RETURNING body_id),
                gone AS (DELETE FROM record_bodies WHERE body_id IN (SELECT body_id FROM replaced) RETURNING 1),
                named AS MATERIALIZED (SELECT family_member_id FROM records WHERE record_id = ANY(\(ids)))
                SELECT (SELECT count(*) FROM named WHERE family_member_id = \(staging.familyMemberID))
                     + (SELECT count(*) FROM record_tombstones
                        WHERE family_member_id = \(staging.familyMemberID) AND record_id = ANY(\(ids))),
                       (SELECT count(*) FROM gone)
                """
            ).first!.decode(Int.self, Int.self)
            try GrantRules.checkBatchOwned(batch: request.records.count, owned: owned)
            let bodyIDs = request.records.map { _ in UUID() }
            try await connection.copyFrom(table: "record_bodies", columns: ["body_id", "nonce", "ciphertext", "tag"]) { writer in
                for (record, bodyID) in zip(request.records, bodyIDs) {
                    try writer.append(bodyID, record.nonce, record.ciphertext, record.tag)
                }
            }
            let sources = PostgresArray(request.records.map(\.sourceChangeSeq))
            let rows: [PostgresRow]
            do {
                rows = try await connection.query(
                    """
                    WITH staged AS (
                        INSERT INTO staged_records (staging_id, record_id, source_change_seq, body_id)
                        SELECT \(revocationID), s.record_id, s.source_change_seq, s.body_id
                        FROM unnest(\(ids), \(sources), \(PostgresArray(bodyIDs))) AS s (record_id, source_change_seq, body_id)
                        RETURNING 1)
                    UPDATE revocation_stagings SET staged_count = staged_count + (SELECT count(*) FROM staged) - \(replaced)
                    WHERE staging_id = \(revocationID)
                    RETURNING staged_count, expected_count
                    """)
            } catch let error as PostgresError where error.isUniqueViolation {
                // Another upload of one of these records committed while this one ran (the same
                // batch sent twice at once): its rows stand, this one's are rolled back.
                throw GrantRules.uploadInFlight
            }
            let (totalStaged, totalExpected) = try rows.first!.decode(Int.self, Int.self)
            return UploadBatchResponse(staged: request.records.count, totalStaged: totalStaged, totalExpected: totalExpected)
        }
    }

    /// Stages a batch of re-encrypted kept versions (`RecordVersionStore.stage`): only the device
    /// that began the revocation, as for records.
    func uploadVersions(
        _ revocationID: UUID, by caller: AuthenticatedDevice, _ request: UploadVersionsRequest
    ) async throws -> UploadVersionsResponse {
        for version in request.versions { try RecordStore.validate(nonce: version.nonce, tag: version.tag) }
        return try await pool.transaction { connection in
            let staging = try await Staging.load(revocationID, by: caller, lock: .keyShare, on: connection)
            try await RecordVersionStore.stage(
                request.versions, revocationID: revocationID, familyMemberID: staging.familyMemberID, on: connection)
            return UploadVersionsResponse(staged: request.versions.count)
        }
    }

    // MARK: Commit

    /// Swaps in every re-encrypted record, stores the new wrapped grants, ends the
    /// revoked grant, bumps the version and writes the event and outbox rows — all
    /// in one transaction. Any failure leaves everything as it was.
    func commit(_ revocationID: UUID, by caller: AuthenticatedDevice, _ request: CommitRevocationRequest) async throws -> RevocationCommitted {
        let owner = caller.userID
        return try await pool.transaction { connection in
            let staging = try await Staging.load(revocationID, by: caller, lock: .update, on: connection)
            let access = try await FamilyMemberAccess.load(staging.familyMemberID, for: owner, lock: true, on: connection)
            try access.requireOwner()
            try GrantRules.checkUnchangedVersion(current: access.currentFMKVersion, from: staging.fromFMKVersion)
            let newVersion = staging.fromFMKVersion + 1
            try GrantRules.checkNewVersion(request.newFMKVersion, from: staging.fromFMKVersion)
            try await checkGrants(request.grants, staging: staging, owner: owner, on: connection)

            // Never a nested loop here: with statistics taken when the family member (or the
            // staging table) was nearly empty, PostgreSQL estimates one row on each side and
            // loops over every staged record for every record — 10,000² comparisons, minutes of
            // CPU inside this transaction (seen in the benchmark). Without it the plan is a
            // hash join of the narrow rows (or a merge join), linear in the record count.
            try await connection.execute("SET LOCAL enable_nestloop = off")
            let recordCount = try await checkNoEditIsLost(revocationID, staging, on: connection)
            // Write-once (migration 0014): the re-encrypted bodies were written by the upload; the
            // swap points each record at its staged body over narrow rows, and the bodies it
            // replaces are queued for the janitor in this transaction (`RecordBodies.collect`).
            try await connection.execute(
                """
                INSERT INTO record_body_garbage (body_id)
                SELECT r.body_id FROM records r
                JOIN staged_records s ON s.staging_id = \(revocationID) AND s.record_id = r.record_id
                WHERE r.family_member_id = \(staging.familyMemberID) AND r.change_seq = s.source_change_seq
                """)
            let swapped = try await connection.execute(
                """
                UPDATE records r
                SET fmk_version = \(newVersion), body_id = s.body_id,
                    change_seq = nextval('record_change_seq'), updated_at = now()
                FROM staged_records s
                WHERE s.staging_id = \(revocationID) AND r.record_id = s.record_id
                  AND r.family_member_id = \(staging.familyMemberID) AND r.change_seq = s.source_change_seq
                """)
            try await connection.execute("SET LOCAL enable_nestloop = on")
            try GrantRules.checkAllSwapped(swapped: swapped, of: recordCount)
            // The deleted and overwritten versions the owner can restore, re-encrypted with the
            // records and counted with them: none is left under the FMK the revoked devices hold.
            let versionCount = try await RecordVersionStore.swap(
                revocationID, familyMemberID: staging.familyMemberID, newVersion: newVersion, on: connection)
            let reencrypted = recordCount + versionCount

            if let revokedUserID = staging.revokedUserID {
                try await connection.execute(
                    """
                    UPDATE access_grants SET revoked_at = now(), wrapped_fmk = NULL
                    WHERE family_member_id = \(staging.familyMemberID) AND grantee_user_id = \(revokedUserID)
                      AND revoked_at IS NULL
                    """)
            }
            let ownerKey = try await families.agreementKey(of: owner, on: connection)!
            // Every new copy in one statement (it was one per grantee: a round trip each, inside
            // the transaction every device's command waits for).
            try await connection.execute(
                """
                UPDATE access_grants g
                SET wrapped_fmk = n.wrapped_fmk, fmk_version = \(newVersion), wrapping = n.wrapping,
                    granter_agreement_public_key = CASE WHEN n.wrapping = 'ecdh' THEN \(ownerKey) END,
                    granted_by_user_id = \(owner)
                FROM unnest(\(PostgresArray(request.grants.map(\.granteeUserID))),
                            \(PostgresArray(request.grants.map(\.wrappedFMK))),
                            \(PostgresArray(request.grants.map(\.wrapping.rawValue)))) AS n(grantee_user_id, wrapped_fmk, wrapping)
                WHERE g.family_member_id = \(staging.familyMemberID) AND g.grantee_user_id = n.grantee_user_id
                  AND g.revoked_at IS NULL
                """)
            try await connection.execute(
                """
                UPDATE family_members SET current_fmk_version = \(newVersion)
                WHERE family_member_id = \(staging.familyMemberID)
                """)
            try await KeyStatementStore.record(
                request.statement, kind: staging.revokedUserID == nil ? .rotate : .revoke,
                familyMemberID: staging.familyMemberID, caller: owner,
                changed: Dictionary(uniqueKeysWithValues: request.grants.map { ($0.granteeUserID, $0.wrappedFMK) }),
                revokedUserID: staging.revokedUserID, on: connection)

            let eventID = UUID()
            let occurredAt = try await connection.query(
                """
                INSERT INTO revocation_events (event_id, family_member_id, revoked_user_id, revoked_by_user_id,
                                               new_fmk_version, records_reencrypted, reason)
                VALUES (\(eventID), \(staging.familyMemberID), \(staging.revokedUserID), \(owner), \(newVersion),
                        \(reencrypted), \(staging.reason))
                RETURNING revoked_at
                """
            ).first!.decode(Date.self, column: 0)
            let devices = try await expectedDevices(staging.familyMemberID, revoking: staging.revokedUserID, on: connection)
                .map { $0.device }
            try await outbox.revocation(
                RevocationEvent(
                    eventID: eventID, familyMemberID: staging.familyMemberID, ownerUserID: owner,
                    ownerAgreementPublicKey: ownerKey, revokedUserID: staging.revokedUserID, revokedByUserID: owner,
                    newFMKVersion: newVersion, recordsReencrypted: reencrypted, reason: staging.reason,
                    clientDurationMs: request.clientDurationMs, occurredAt: occurredAt, expectedDevices: devices),
                on: connection)
            try await outbox.commands(
                devices.map { device in
                    DeviceCommand(
                        commandID: UUID(), eventID: eventID, deviceID: device.deviceID, action: device.action,
                        familyMemberID: staging.familyMemberID, newFMKVersion: newVersion, issuedAt: occurredAt)
                },
                on: connection)
            // The exposure report: what the revoked user's devices could hold, sealed to the owner. Before
            // the staging area goes: it keeps each record's change sequence from before the swap.
            // A rotation revokes nobody: no exposure report (the stolen device's is `device list`'s).
            if let revokedUserID = staging.revokedUserID {
                try await RevocationExposureStore.snapshot(
                    eventID: eventID, familyMemberID: staging.familyMemberID, revocationID: revocationID,
                    revokedUserID: revokedUserID, owner: owner, fromFMKVersion: staging.fromFMKVersion,
                    newFMKVersion: newVersion, committedAt: occurredAt, on: connection)
            }
            // Staged bodies of records deleted since they were downloaded were not swapped in.
            if staging.stagedCount > swapped {
                try await connection.execute(
                    """
                    INSERT INTO record_body_garbage (body_id)
                    SELECT s.body_id FROM staged_records s
                    WHERE s.staging_id = \(revocationID)
                      AND NOT EXISTS (SELECT 1 FROM records r WHERE r.body_id = s.body_id)
                    """)
            }
            try await Staging.delete(revocationID, on: connection)
            return RevocationCommitted(
                eventID: eventID, familyMemberID: staging.familyMemberID, newFMKVersion: newVersion,
                recordsReencrypted: reencrypted, devicesNotified: devices.count)
        }
    }

    /// Every live record must have been re-encrypted from the ciphertext it holds now.
    /// - Returns: the family member's record count.
    /// - Throws: 422 `records_missing` for records that existed, unchanged, when the revocation
    ///   began and were never uploaded (a client's bug); otherwise 409 `records_changed` for
    ///   records edited or created since they were downloaded — the client re-encrypts those
    ///   and commits again. A record deleted since is simply not swapped in: its deletion stands.
    private func checkNoEditIsLost(
        _ revocationID: UUID, _ staging: Staging, on connection: PostgresConnection
    ) async throws -> Int {
        let row = try await connection.query(
            """
            SELECT count(*),
                   count(*) FILTER (WHERE s.record_id IS NULL AND r.change_seq <= \(staging.beginChangeSeq)),
                   count(*) FILTER (WHERE s.record_id IS NULL AND r.change_seq > \(staging.beginChangeSeq)
                                       OR s.source_change_seq <> r.change_seq),
                   (array_agg(r.record_id ORDER BY r.change_seq)
                        FILTER (WHERE s.record_id IS NULL AND r.change_seq > \(staging.beginChangeSeq)
                                   OR s.source_change_seq <> r.change_seq))[1:3]::text
            FROM records r
            LEFT JOIN staged_records s ON s.staging_id = \(revocationID) AND s.record_id = r.record_id
            WHERE r.family_member_id = \(staging.familyMemberID)
            """
        ).first!
        let (total, missing, changed, examples) = try row.decode(Int.self, Int.self, Int.self, String?.self)
        try GrantRules.checkNoEditIsLost(total: total, missing: missing, changed: changed, examples: examples)
        return total
    }

    /// The new grants must re-wrap the FMK for exactly the remaining grantees (`GrantRules.checkNewGrants`),
    /// each ecdh copy to the grantee's current agreement key.
    private func checkGrants(
        _ grants: [NewGrant], staging: Staging, owner: UUID, on connection: PostgresConnection
    ) async throws {
        let active = Set(
            try await connection.query(
                """
                SELECT grantee_user_id FROM access_grants
                WHERE family_member_id = \(staging.familyMemberID) AND revoked_at IS NULL
                """
            ).map { try $0.decode(UUID.self, column: 0) })
        try GrantRules.checkNewGrants(grants, activeGrantees: active, revokedUserID: staging.revokedUserID, ownerUserID: owner)
        let ecdh = grants.filter { $0.wrapping == .ecdh }
        let current = try await KeyStatementStore.agreementKeys(of: ecdh.map(\.granteeUserID), on: connection)
        for grant in ecdh where current[grant.granteeUserID] != grant.granteeAgreementPublicKey {
            throw GrantRules.staleIdentityKey
        }
    }

    /// Active agent devices of everyone who kept access rotate; those of the revoked user erase
    /// (a rotation, `revokedUserID` nil: every holder's rotate). Interactive devices (`DeviceRole`)
    /// keep no cache and read nothing after the commit: they are not expected to answer. The commit
    /// and the preview both choose devices here.
    private func expectedDevices(
        _ familyMemberID: UUID, revoking revokedUserID: UUID?, on connection: PostgresConnection
    ) async throws -> [(device: RevocationEvent.ExpectedDevice, name: String, userDisplayName: String)] {
        try await connection.query(
            """
            SELECT DISTINCT d.device_id, d.user_id, d.signing_public_key, d.name, u.display_name
            FROM devices d JOIN access_grants g ON g.grantee_user_id = d.user_id JOIN users u ON u.user_id = d.user_id
            WHERE g.family_member_id = \(familyMemberID) AND d.retired_at IS NULL AND d.role = 'agent'
              AND (g.revoked_at IS NULL OR g.grantee_user_id = \(revokedUserID)::uuid)
            ORDER BY d.user_id, d.device_id
            """
        ).map { row in
            let (device, user, key, name, userName) = try row.decode(UUID.self, UUID.self, Data.self, String.self, String.self)
            let expected = RevocationEvent.ExpectedDevice(
                deviceID: device, userID: user, action: user == revokedUserID ? .secureDeletion : .fmkRotation,
                signingPublicKey: key)
            return (device: expected, name: name, userDisplayName: userName)
        }
    }

    // MARK: Abandon

    func abandon(_ revocationID: UUID, by caller: AuthenticatedDevice) async throws {
        try await pool.transaction { connection in
            _ = try await Staging.load(revocationID, by: caller, lock: .update, on: connection)
            try await RecordBodies.queueStaged(of: revocationID, on: connection)
            try await RecordVersionStore.queueStaged(of: [revocationID], on: connection)
            try await Staging.delete(revocationID, on: connection)
        }
    }
}

/// A revocation in progress, as stored.
private struct Staging {
    let familyMemberID: UUID
    /// Nil for a rotation that revokes nobody.
    let revokedUserID: UUID?
    let fromFMKVersion: Int
    let reason: String?
    /// The family member's highest change sequence when the revocation began.
    let beginChangeSeq: Int64
    /// How many records are staged (`revocation_stagings.staged_count`).
    let stagedCount: Int

    enum RowLock: String {
        case keyShare = "FOR KEY SHARE"
        case update = "FOR UPDATE"
    }

    /// 401 `device_retired` unless `caller`'s device is active, its row then key-share locked until
    /// the transaction ends (a retirement, `IdentityStore.retireDevice`, waits for it).
    static func requireActiveDevice(_ caller: AuthenticatedDevice, on connection: PostgresConnection) async throws {
        let active = try await connection.query(
            "SELECT 1 FROM devices WHERE device_id = \(caller.deviceID) AND retired_at IS NULL FOR KEY SHARE")
        try GrantRules.checkDeviceActive(!active.isEmpty)
    }

    /// Deletes a staging and its staged rows (no cascade since migration 0015; its staged versions
    /// go by cascade), in the caller's transaction. Their bodies are the caller's to queue or keep.
    static func delete(_ id: UUID, on connection: PostgresConnection) async throws {
        try await connection.execute("DELETE FROM staged_records WHERE staging_id = \(id)")
        try await connection.execute("DELETE FROM revocation_stagings WHERE staging_id = \(id)")
    }

    /// 404 when missing or expired, 403 when another user (`forbidden`) or another device of the
    /// caller's (`staging_owned_by_other_device`) began it. Refused before anything is changed.
    static func load(_ id: UUID, by caller: AuthenticatedDevice, lock: RowLock, on connection: PostgresConnection) async throws -> Staging {
        let rows = try await connection.query(
            """
            SELECT family_member_id, revoked_user_id, from_fmk_version, reason, started_by_user_id, begin_change_seq,
                   staged_count, started_by_device_id
            FROM revocation_stagings WHERE staging_id = \(id) AND expires_at > now()
            \(unescaped: lock.rawValue)
            """)
        let startedBy = try rows.first.map { row in
            (user: try row.decode(UUID.self, column: 4), device: try row.decode(UUID.self, column: 7))
        }
        try GrantRules.checkContinues(startedBy: startedBy, caller: (user: caller.userID, device: caller.deviceID))
        let (familyMemberID, revoked, from, reason, _, beginChangeSeq, stagedCount, _) = try rows.first!.decode(
            UUID.self, UUID?.self, Int.self, String?.self, UUID.self, Int64.self, Int.self, UUID.self)
        return Staging(
            familyMemberID: familyMemberID, revokedUserID: revoked, fromFMKVersion: from, reason: reason,
            beginChangeSeq: beginChangeSeq, stagedCount: stagedCount)
    }
}
