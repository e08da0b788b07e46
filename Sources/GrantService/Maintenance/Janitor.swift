import Foundation
import Logging
import RescindObservability
import RescindPostgres
import RescindServiceSupport
import RescindProtocol
import ServiceLifecycle

/// Periodic clean-up: abandoned revocation stagings (and their staged bodies), the record
/// bodies a revocation's commit replaced (`RecordBodies`), deleted and overwritten records past
/// their restore window (`RecordVersionStore`), spent challenges and
/// expired tokens, published outbox rows, the devices' kept commands older than
/// `deviceCommandRetention`, and — the seeds' retention rule — revoked grants older
/// than the retention period (each purge announced on `access_events` so the audit
/// log records it).
struct Janitor: Sendable {
    let pool: PostgresConnectionPool
    let families: FamilyMemberStore
    let outbox: OutboxWriter
    let retention: Duration
    /// How long a device's signed commands stay fetchable at check-in (`device_commands`).
    let deviceCommandRetention: Duration
    /// Deleted and overwritten records past their restore window are deleted.
    let versions: RecordVersionStore
    let logger: Logger

    /// One pass; the application runs it every janitor interval (`PeriodicService`).
    func sweep() async throws {
        let bodies = try await pool.withConnection { connection in
            try await RecordBodies.expireStagings(on: connection)
            return try await RecordBodies.collect(on: connection)
        }
        if bodies > 0 { logger.info("deleted record bodies no record refers to", metadata: [LogKey.records: "\(bodies)"]) }
        try await pool.withConnection { connection in
            try await connection.execute("DELETE FROM auth_challenges WHERE expires_at < now() - interval '1 hour'")
            try await connection.execute("DELETE FROM enrolment_challenges WHERE expires_at < now() - interval '1 hour'")
            try await connection.execute("DELETE FROM recovery_challenges WHERE expires_at < now() - interval '1 hour'")
            try await connection.execute("DELETE FROM auth_tokens WHERE expires_at < now()")
            try await connection.execute("DELETE FROM outbox WHERE sent_at < now() - interval '1 day'")
        }
        let expired = try await versions.purge()
        if expired > 0 { logger.info("deleted record versions past the restore window", metadata: [LogKey.records: "\(expired)"]) }
        let pruned = try await pruneDeviceCommands()
        if pruned > 0 { logger.info("pruned device commands past retention", metadata: [LogKey.commands: "\(pruned)"]) }
        let purged = try await purgeRevokedGrants()
        if purged > 0 { logger.info("purged revoked grants", metadata: [LogKey.grants: "\(purged)"]) }
    }

    /// Deletes the kept commands (`device_commands`) older than `deviceCommandRetention`.
    ///
    /// Younger ones are what a device can still need: one that missed a command on the topic
    /// fetches it at check-in, and the audit service's re-issues (minutes to hours after the
    /// commit) point back to it. A device offline for longer than the retention no longer finds
    /// its old commands, and needs none of them to converge: its version check at start rotates
    /// it to the current FMK or erases on 403; only its answers to those commands are missing.
    /// - Returns: how many were deleted.
    @discardableResult
    func pruneDeviceCommands() async throws -> Int {
        try await pool.withConnection { connection in
            try await connection.query(
                """
                DELETE FROM device_commands WHERE created_at < now() - make_interval(secs => \(deviceCommandRetention.wholeSeconds))
                RETURNING seq
                """
            ).count
        }
    }

    /// Hard-deletes grants revoked longer than `retention` ago.
    /// - Returns: how many were deleted.
    @discardableResult
    func purgeRevokedGrants() async throws -> Int {
        try await pool.transaction { connection in
            let rows = try await connection.query(
                """
                DELETE FROM access_grants
                WHERE revoked_at IS NOT NULL AND revoked_at < now() - make_interval(secs => \(retention.wholeSeconds))
                RETURNING family_member_id, grantee_user_id, fmk_version, revoked_at
                """)
            for row in rows {
                let (familyMemberID, grantee, version, revokedAt) = try row.decode(UUID.self, UUID.self, Int.self, Date.self)
                let owner = try await connection.query(
                    "SELECT owner_user_id FROM family_members WHERE family_member_id = \(familyMemberID)"
                ).first!.decode(UUID.self, column: 0)
                try await outbox.access(
                    try await families.accessEvent(
                        .revokedGrantsPurged, familyMemberID: familyMemberID, actor: owner, target: grantee,
                        version: version,
                        details: ["revoked_at": Timestamp.format(revokedAt), "policy": "retention"], on: connection),
                    on: connection)
            }
            return rows.count
        }
    }
}
