import Foundation
import RescindPostgres
import RescindProtocol
import RescindServiceSupport

/// Family members, their access grants and the wrapped FMKs those grants carry.
struct FamilyMemberStore: Sendable {
    let pool: PostgresConnectionPool
    let outbox: OutboxWriter

    /// Creates the family member at FMK v1 with the owner's self-wrapped copy.
    func create(_ request: CreateFamilyMemberRequest, owner: UUID) async throws -> FamilyMemberResponse {
        try await pool.transaction { connection in
            let createdAt: Date
            do {
                createdAt = try await connection.query(
                    """
                    INSERT INTO family_members (family_member_id, owner_user_id) VALUES (\(request.familyMemberID), \(owner))
                    RETURNING created_at
                    """
                ).first!.decode(Date.self, column: 0)
            } catch let error as PostgresError where error.isUniqueViolation {
                throw APIError.conflict("already_exists", "a family member with this id already exists")
            }
            try await insertGrant(
                familyMemberID: request.familyMemberID, grantee: owner, grantedBy: owner, wrapping: .self,
                granterKey: nil, wrappedFMK: request.wrappedFMK, version: 1, on: connection)
            try await KeyStatementStore.record(
                request.statement, kind: .create, familyMemberID: request.familyMemberID, caller: owner,
                changed: [owner: request.wrappedFMK], on: connection)
            try await outbox.access(
                try await accessEvent(
                    .familyMemberCreated, familyMemberID: request.familyMemberID, actor: owner, target: nil,
                    version: 1, on: connection),
                on: connection)
            return FamilyMemberResponse(
                familyMemberID: request.familyMemberID, ownerUserID: owner, currentFMKVersion: 1, createdAt: createdAt)
        }
    }

    func list(for userID: UUID) async throws -> [FamilyMemberResponse] {
        try await pool.withConnection { connection in
            try await connection.query(
                """
                SELECT f.family_member_id, f.owner_user_id, f.current_fmk_version, f.created_at
                FROM family_members f JOIN access_grants g USING (family_member_id)
                WHERE g.grantee_user_id = \(userID) AND g.revoked_at IS NULL
                ORDER BY f.created_at, f.family_member_id
                """
            ).map { row in
                let (id, owner, version, created) = try row.decode(UUID.self, UUID.self, Int.self, Date.self)
                return FamilyMemberResponse(familyMemberID: id, ownerUserID: owner, currentFMKVersion: version, createdAt: created)
            }
        }
    }

    /// The family member, for a caller with an active grant.
    func get(_ familyMemberID: UUID, for userID: UUID) async throws -> FamilyMemberResponse {
        try await pool.withConnection { connection in
            let access = try await FamilyMemberAccess.load(familyMemberID, for: userID, on: connection)
            try access.requireActiveGrant()
            return FamilyMemberResponse(
                familyMemberID: familyMemberID, ownerUserID: access.ownerUserID,
                currentFMKVersion: access.currentFMKVersion, createdAt: access.createdAt)
        }
    }

    /// The caller's own wrapped FMK; revoked callers get 403 (`access_revoked`).
    /// With it, the key statements after `knownSeq`, read in the same snapshot (one transaction).
    func key(_ familyMemberID: UUID, for userID: UUID, knownSeq: Int = 0) async throws -> WrappedKeyResponse {
        try await pool.transaction { connection in
            let access = try await FamilyMemberAccess.load(familyMemberID, for: userID, on: connection)
            try access.requireActiveGrant()
            var response = try await keyResponse(familyMemberID, userID, on: connection)
            response.keyStatements = try await KeyStatementStore.list(familyMemberID, after: knownSeq, on: connection)
            return response
        }
    }

    /// The key statements after `seq`, for anyone who holds or held a grant (a revoked user's
    /// device reads the statement that excludes it before it erases).
    func keyStatements(_ familyMemberID: UUID, for userID: UUID, after seq: Int) async throws -> KeyStatementList {
        try await pool.withConnection { connection in
            let access = try await FamilyMemberAccess.load(familyMemberID, for: userID, on: connection)
            try GrantRules.checkHeldAccess(access.standing)
            return KeyStatementList(
                familyMemberID: familyMemberID,
                statements: try await KeyStatementStore.list(familyMemberID, after: seq, on: connection))
        }
    }

    /// Replaces the caller's own wrapped copy at the current version, e.g. a new
    /// owner re-wrapping under their master key.
    func replaceKey(_ familyMemberID: UUID, for userID: UUID, with request: ReplaceKeyRequest) async throws -> WrappedKeyResponse {
        try await pool.transaction { connection in
            let access = try await FamilyMemberAccess.load(familyMemberID, for: userID, lock: true, on: connection)
            try access.requireActiveGrant()
            guard request.fmkVersion == access.currentFMKVersion else {
                throw APIError.versionConflict(current: access.currentFMKVersion)
            }
            guard (request.wrapping == .ecdh) == (request.granterAgreementPublicKey != nil) else {
                throw APIError.unprocessable(
                    "invalid_wrapping", "an ecdh copy names the granter's key; a self copy does not")
            }
            try await connection.execute(
                """
                UPDATE access_grants
                SET wrapping = \(request.wrapping), wrapped_fmk = \(request.wrappedFMK),
                    granter_agreement_public_key = \(request.granterAgreementPublicKey),
                    granted_by_user_id = CASE WHEN \(request.wrapping) = 'self' THEN grantee_user_id ELSE granted_by_user_id END
                WHERE family_member_id = \(familyMemberID) AND grantee_user_id = \(userID) AND revoked_at IS NULL
                """)
            if request.wrapping == .self {
                // Only the owner's copy is self-wrapped, and it changes only with the owner's
                // statement: `adopt` after a transfer, `rekey` after an identity rotation.
                guard access.isOwner else {
                    throw APIError.unprocessable("invalid_wrapping", "only the owner's own copy can be self-wrapped")
                }
                let kind: KeyStatement.Kind = request.statement?.statement.kind == .rekey ? .rekey : .adopt
                try await KeyStatementStore.record(
                    request.statement, kind: kind, familyMemberID: familyMemberID, caller: userID,
                    changed: [userID: request.wrappedFMK], on: connection)
            }
            return try await keyResponse(familyMemberID, userID, on: connection)
        }
    }

    private func keyResponse(_ familyMemberID: UUID, _ userID: UUID, on connection: PostgresConnection) async throws -> WrappedKeyResponse {
        let row = try await connection.query(
            """
            SELECT fmk_version, wrapping, wrapped_fmk, granted_by_user_id, granter_agreement_public_key
            FROM access_grants
            WHERE family_member_id = \(familyMemberID) AND grantee_user_id = \(userID) AND revoked_at IS NULL
            """
        ).first!
        let (version, wrapping, wrapped, grantedBy, granterKey) = try row.decode(
            Int.self, KeyWrapping.self, Data.self, UUID.self, Data?.self)
        return WrappedKeyResponse(
            familyMemberID: familyMemberID, fmkVersion: version, wrapping: wrapping, wrappedFMK: wrapped,
            grantedByUserID: grantedBy, granterAgreementPublicKey: granterKey)
    }

    /// Grants (or re-grants) access with an FMK wrapped from the owner's key to the grantee's.
    func grant(_ familyMemberID: UUID, by owner: UUID, _ request: GrantRequest) async throws -> GrantResponse {
        try await pool.transaction { connection in
            let access = try await FamilyMemberAccess.load(familyMemberID, for: owner, lock: true, on: connection)
            try access.requireOwner()
            guard request.granteeUserID != owner else {
                throw APIError.unprocessable("grant_to_self", "the owner already holds the key")
            }
            guard request.fmkVersion == access.currentFMKVersion else {
                throw APIError.versionConflict(current: access.currentFMKVersion)
            }
            guard let ownerKey = try await agreementKey(of: owner, on: connection) else { throw APIError.notFound("owner") }
            guard let granteeKey = try await agreementKey(of: request.granteeUserID, on: connection) else {
                throw APIError.notFound("grantee")
            }
            guard request.granteeAgreementPublicKey == granteeKey else { throw APIError.staleIdentityKey }
            let previous = try await connection.query(
                """
                SELECT bool_or(revoked_at IS NULL), count(*) FROM access_grants
                WHERE family_member_id = \(familyMemberID) AND grantee_user_id = \(request.granteeUserID)
                """
            ).first!.decode(Bool?.self, column: 0)
            if previous == true {
                throw APIError.conflict("already_granted", "this user already has access; revoke first to change it")
            }
            let grantID = try await insertGrant(
                familyMemberID: familyMemberID, grantee: request.granteeUserID, grantedBy: owner, wrapping: .ecdh,
                granterKey: ownerKey, wrappedFMK: request.wrappedFMK, version: request.fmkVersion, on: connection)
            try await KeyStatementStore.record(
                request.statement, kind: .grant, familyMemberID: familyMemberID, caller: owner,
                changed: [request.granteeUserID: request.wrappedFMK], on: connection)
            try await outbox.access(
                try await accessEvent(
                    previous == false ? .accessRegranted : .accessGranted, familyMemberID: familyMemberID,
                    actor: owner, target: request.granteeUserID, version: request.fmkVersion, on: connection),
                on: connection)
            return try await grants(familyMemberID, on: connection).first { $0.grantID == grantID }!
        }
    }

    /// Everyone who has or had access (revoked grants stay listed until purged). Owner only.
    func grants(_ familyMemberID: UUID, for userID: UUID) async throws -> [GrantResponse] {
        try await pool.withConnection { connection in
            let access = try await FamilyMemberAccess.load(familyMemberID, for: userID, on: connection)
            try access.requireOwner()
            return try await grants(familyMemberID, on: connection)
        }
    }

    private func grants(_ familyMemberID: UUID, on connection: PostgresConnection) async throws -> [GrantResponse] {
        try await connection.query(
            """
            SELECT grant_id, grantee_user_id, granted_by_user_id, wrapping, fmk_version, created_at, revoked_at
            FROM access_grants WHERE family_member_id = \(familyMemberID)
            ORDER BY created_at, grant_id
            """
        ).map { row in
            let (id, grantee, grantedBy, wrapping, version, created, revoked) = try row.decode(
                UUID.self, UUID.self, UUID.self, KeyWrapping.self, Int.self, Date.self, Date?.self)
            return GrantResponse(
                grantID: id, familyMemberID: familyMemberID, granteeUserID: grantee, grantedByUserID: grantedBy,
                wrapping: wrapping, fmkVersion: version, createdAt: created, revokedAt: revoked)
        }
    }

    /// Refuses a transfer that would not apply now (every rule, the statement against the head),
    /// changing nothing: it is applied, rolled back.
    func checkTransfer(_ transfer: OwnershipTransfer, from owner: UUID) async throws {
        struct Checked: Error {}
        do {
            try await pool.transaction { connection in
                _ = try await applyTransfer(transfer, from: owner, on: connection)
                throw Checked()
            }
        } catch is Checked {}
    }

    /// Hands ownership to a current grantee, with the owner's statement: the effect of a
    /// governed transfer (`GovernanceStore`). Their copy stays as it is (they can re-wrap it
    /// under their own master key with `replaceKey`); the previous owner keeps access until the
    /// new owner revokes it.
    func applyTransfer(_ transfer: OwnershipTransfer, from owner: UUID, on connection: PostgresConnection) async throws -> FamilyMemberResponse {
        let (familyMemberID, newOwner, statement) = (transfer.familyMemberID, transfer.newOwnerUserID, transfer.statement)
        let access = try await FamilyMemberAccess.load(familyMemberID, for: owner, lock: true, on: connection)
        try access.requireOwner()
        guard newOwner != owner else {
            throw APIError.unprocessable("already_owner", "you already own this family member")
        }
        let target = try await FamilyMemberAccess.load(familyMemberID, for: newOwner, on: connection)
        guard case .active = target.standing else {
            throw APIError.unprocessable("not_a_grantee", "ownership can only pass to someone with active access")
        }
        try await connection.execute(
            "UPDATE family_members SET owner_user_id = \(newOwner) WHERE family_member_id = \(familyMemberID)")
        try await KeyStatementStore.record(
            statement, kind: .transfer, familyMemberID: familyMemberID, caller: owner, changed: [:],
            newOwner: newOwner, on: connection)
        try await outbox.access(
            try await accessEvent(
                .ownershipTransferred, familyMemberID: familyMemberID, actor: owner, target: newOwner,
                version: access.currentFMKVersion, details: ["previous_owner_user_id": owner.uuidString.lowercased()],
                on: connection),
            on: connection)
        return FamilyMemberResponse(
            familyMemberID: familyMemberID, ownerUserID: newOwner, currentFMKVersion: access.currentFMKVersion,
            createdAt: access.createdAt)
    }

    // MARK: Shared with the revocation store

    @discardableResult
    func insertGrant(
        familyMemberID: UUID, grantee: UUID, grantedBy: UUID, wrapping: KeyWrapping, granterKey: Data?,
        wrappedFMK: Data, version: Int, on connection: PostgresConnection
    ) async throws -> UUID {
        let grantID = UUID()
        do {
            try await connection.execute(
                """
                INSERT INTO access_grants (grant_id, family_member_id, grantee_user_id, granted_by_user_id, wrapping,
                                           granter_agreement_public_key, wrapped_fmk, fmk_version)
                VALUES (\(grantID), \(familyMemberID), \(grantee), \(grantedBy), \(wrapping), \(granterKey), \(wrappedFMK), \(version))
                """)
        } catch let error as PostgresError where error.isCheckViolation {
            // The table's CHECK is the same rule, enforced once more by the database.
            throw GrantRules.invalidWrappedKey
        }
        return grantID
    }

    func agreementKey(of userID: UUID, on connection: PostgresConnection) async throws -> Data? {
        try await connection.query("SELECT agreement_public_key FROM users WHERE user_id = \(userID)")
            .first?.decode(Data.self, column: 0)
    }

    func accessEvent(
        _ kind: AccessEvent.Kind, familyMemberID: UUID, actor: UUID, target: UUID?, version: Int,
        details: [String: String] = [:], on connection: PostgresConnection
    ) async throws -> AccessEvent {
        let row = try await connection.query(
            """
            SELECT f.owner_user_id, u.agreement_public_key, now()
            FROM family_members f JOIN users u ON u.user_id = f.owner_user_id
            WHERE f.family_member_id = \(familyMemberID)
            """
        ).first!
        let (owner, ownerKey, now) = try row.decode(UUID.self, Data.self, Date.self)
        return AccessEvent(
            eventID: UUID(), kind: kind, familyMemberID: familyMemberID, ownerUserID: owner,
            ownerAgreementPublicKey: ownerKey, actorUserID: actor, targetUserID: target, fmkVersion: version,
            details: details, occurredAt: now)
    }
}
