import Foundation
import RescindPostgres
import RescindProtocol
import RescindServiceSupport

/// Each user's keys escrowed to their recovery key (`key_backups`): opaque to the service, which
/// keeps one only when it matches the user's keys as registered right now.
struct KeyBackupStore: Sendable {
    let pool: PostgresConnectionPool

    /// Stores `backup` in place of the user's previous one. The caller checked its signature
    /// against `backup.recoveryPublicKey`; this checks, under the user's row lock, that the
    /// keys it names are the user's current ones.
    /// - Throws: 409 `stale_key_backup` when the identity or agreement key is not the user's
    ///   current one (a rotation took effect since), `recovery_key_not_registered` when the
    ///   recovery key is not the one registered.
    func store(_ backup: KeyBackup) async throws {
        try await pool.transaction { connection in
            guard let (identity, agreement, recovery) = try await connection.query(
                "SELECT identity_public_key, agreement_public_key, recovery_public_key FROM users WHERE user_id = \(backup.userID) FOR UPDATE"
            ).first.map({ try $0.decode(Data.self, Data.self, Data?.self) }) else {
                throw APIError.notFound("user")
            }
            guard recovery == backup.recoveryPublicKey else {
                throw APIError.conflict("recovery_key_not_registered", "the backup is signed by a recovery key that is not the user's registered one")
            }
            guard identity == backup.identityPublicKey, agreement == backup.agreementPublicKey else {
                throw APIError.conflict("stale_key_backup", "the backup holds keys that are not the user's current identity and agreement keys")
            }
            try await connection.execute(
                """
                INSERT INTO key_backups (user_id, identity_public_key, agreement_public_key, recovery_public_key,
                    ephemeral_public_key, agreement_key, identity_key, master_key, signature)
                VALUES (\(backup.userID), \(backup.identityPublicKey), \(backup.agreementPublicKey), \(backup.recoveryPublicKey),
                    \(backup.ephemeralPublicKey), \(backup.agreementKey), \(backup.identityKey), \(backup.masterKey), \(backup.signature))
                ON CONFLICT (user_id) DO UPDATE SET identity_public_key = excluded.identity_public_key,
                    agreement_public_key = excluded.agreement_public_key, recovery_public_key = excluded.recovery_public_key,
                    ephemeral_public_key = excluded.ephemeral_public_key, agreement_key = excluded.agreement_key,
                    identity_key = excluded.identity_key, master_key = excluded.master_key, signature = excluded.signature,
                    stored_at = now()
                """)
        }
    }

    /// The user's backup, or nil when none was stored.
    func backup(of userID: UUID) async throws -> KeyBackup? {
        try await pool.withConnection { connection in
            try await connection.query(
                """
                SELECT identity_public_key, agreement_public_key, recovery_public_key, ephemeral_public_key,
                    agreement_key, identity_key, master_key, signature
                FROM key_backups WHERE user_id = \(userID)
                """
            ).first.map { row in
                let (identity, agreement, recovery, ephemeral, agreementKey, identityKey, masterKey, signature) = try row.decode(
                    Data.self, Data.self, Data.self, Data.self, Data.self, Data.self, Data.self, Data.self)
                return KeyBackup(
                    userID: userID, identityPublicKey: identity, agreementPublicKey: agreement, recoveryPublicKey: recovery,
                    ephemeralPublicKey: ephemeral, agreementKey: agreementKey, identityKey: identityKey, masterKey: masterKey,
                    signature: signature)
            }
        }
    }
}
