import Foundation
import RescindPostgres
import RescindProtocol
import RescindServiceSupport

/// Identity-key rotations: the statements, and the keys they replaced. A rotation takes effect
/// through `GovernanceStore` (after the security delay, or approved).
struct IdentityRotationStore: Sendable {
    let pool: PostgresConnectionPool

    /// Refuses a rotation that does not follow from the user's current generation and key, or
    /// names a key that was ever an identity key; locks the user's row.
    /// - Throws: 409 `stale_rotation` when the user's keys moved on (a replay, or a rotation
    ///   from another device first); 409 `key_reused` for a key that was ever an identity key.
    static func check(_ statement: IdentityRotationStatement, on connection: PostgresConnection) async throws {
        guard let row = try await connection.query(
            "SELECT identity_generation, identity_public_key FROM users WHERE user_id = \(statement.userID) FOR UPDATE"
        ).first else { throw APIError.notFound("user") }
        let (generation, identityKey) = try row.decode(Int.self, Data.self)
        guard statement.generation == generation + 1, statement.previousIdentityPublicKey == identityKey else {
            throw APIError.conflict(
                "stale_rotation", "your identity is at generation \(generation); a rotation must start generation \(generation + 1) from the current key")
        }
        let reused = try await connection.query(
            """
            SELECT EXISTS (SELECT 1 FROM retired_identity_keys WHERE public_key IN (\(statement.identityPublicKey), \(statement.agreementPublicKey)))
                OR EXISTS (SELECT 1 FROM users
                           WHERE identity_public_key IN (\(statement.identityPublicKey), \(statement.agreementPublicKey))
                              OR agreement_public_key IN (\(statement.identityPublicKey), \(statement.agreementPublicKey)))
            """
        ).first!.decode(Bool.self, column: 0)
        guard !reused else { throw APIError.conflict("key_reused", "a new identity key must never have been used before") }
    }

    /// Makes the statement's keys the user's current ones (signatures were checked when it was
    /// received; `check` runs again here, as the user may have moved on meanwhile).
    static func apply(_ rotation: IdentityRotation, on connection: PostgresConnection) async throws -> UserResponse {
        let statement = rotation.statement
        try await check(statement, on: connection)
        try await connection.execute(
            """
            INSERT INTO retired_identity_keys (public_key, user_id)
            SELECT identity_public_key, user_id FROM users WHERE user_id = \(statement.userID)
            UNION ALL SELECT agreement_public_key, user_id FROM users WHERE user_id = \(statement.userID)
            """)
        try await connection.execute(
            """
            INSERT INTO identity_rotations (user_id, generation, previous_identity_public_key, identity_public_key,
                                            agreement_public_key, issued_at, previous_key_signature, new_key_signature,
                                            recovery_signature, device_approvals)
            VALUES (\(statement.userID), \(statement.generation), \(statement.previousIdentityPublicKey),
                    \(statement.identityPublicKey), \(statement.agreementPublicKey), \(statement.issuedAt),
                    \(rotation.previousKeySignature), \(rotation.newKeySignature), \(rotation.recoverySignature),
                    \(try rotation.deviceApprovals.map { try CanonicalJSON.encode($0) }))
            """)
        let recoveryKey = try await connection.query(
            "SELECT recovery_public_key FROM users WHERE user_id = \(statement.userID)"
        ).first!.decode(Data?.self, column: 0)
        return try await connection.query(
            """
            UPDATE users SET identity_public_key = \(statement.identityPublicKey),
                             agreement_public_key = \(statement.agreementPublicKey),
                             identity_generation = \(statement.generation),
                             recovery_binding = \(Self.binding(rotation, recoveryKey: recoveryKey))
            WHERE user_id = \(statement.userID)
            RETURNING \(unescaped: IdentityStore.userColumns)
            """
        ).map(IdentityStore.decodeUser).first!
    }

    /// The rotation's binding of `recoveryKey` by the new identity key, if it is one; otherwise
    /// none (the recovery key changed since it was made, or the rotation carried none): the user's
    /// clients then name no recovery key until one is bound again.
    static func binding(_ rotation: IdentityRotation, recoveryKey: Data?) -> Data? {
        guard let recoveryKey, let binding = rotation.recoveryBinding,
              RecoveryKeyBinding.isValid(
                binding, userID: rotation.statement.userID, identityPublicKey: rotation.statement.identityPublicKey,
                recoveryPublicKey: recoveryKey)
        else { return nil }
        return binding
    }

    /// Every rotation of a user, oldest first (empty for a user who never rotated).
    func rotations(of userID: UUID) async throws -> [IdentityRotation] {
        try await pool.withConnection { connection in
            guard try await connection.query("SELECT 1 FROM users WHERE user_id = \(userID)").first != nil else {
                throw APIError.notFound("user")
            }
            return try await connection.query(
                "SELECT \(unescaped: Self.columns) FROM identity_rotations WHERE user_id = \(userID) ORDER BY generation"
            ).map(Self.decode)
        }
    }

    /// The rotation that made `identityKey` its user's identity key (an identity key is never
    /// used twice), if any.
    static func rotation(to identityKey: Data, on connection: PostgresConnection) async throws -> IdentityRotation? {
        try await connection.query(
            "SELECT \(unescaped: columns) FROM identity_rotations WHERE identity_public_key = \(identityKey)"
        ).first.map(decode)
    }

    private static let columns = """
        user_id, generation, previous_identity_public_key, identity_public_key, agreement_public_key, issued_at,
        previous_key_signature, new_key_signature, recovery_signature, device_approvals
        """

    private static func decode(_ row: PostgresRow) throws -> IdentityRotation {
        let (userID, generation, previous, identity, agreement, issuedAt, previousSignature, newSignature, recoverySignature, approvals) =
            try row.decode(UUID.self, Int.self, Data.self, Data.self, Data.self, Date.self, Data.self, Data.self, Data?.self, Data?.self)
        return IdentityRotation(
            statement: IdentityRotationStatement(
                userID: userID, generation: generation, previousIdentityPublicKey: previous,
                identityPublicKey: identity, agreementPublicKey: agreement, issuedAt: issuedAt),
            previousKeySignature: previousSignature, newKeySignature: newSignature, recoverySignature: recoverySignature,
            deviceApprovals: try approvals.map { try CanonicalJSON.decode([DeviceApproval].self, from: $0) })
    }
}
