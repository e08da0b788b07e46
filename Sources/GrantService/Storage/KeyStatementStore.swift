import Foundation
import RescindPostgres
import RescindProtocol
import RescindServiceSupport

/// The owner-signed key statements of each family member (`key_statements`): checked against
/// the chain's head and the grants a change leaves (`GrantRules.checkKeyStatement`), stored in
/// the change's own transaction, served to whoever holds or held a grant.
struct KeyStatementStore: Sendable {
    /// Most statements one answer carries; a client asks again after the last.
    static let pageLimit = 500

    struct Head: Sendable {
        let seq: Int
        let hash: Data
        let statement: KeyStatement
    }

    /// The last statement; call with the family member's row locked.
    static func head(_ familyMemberID: UUID, on connection: PostgresConnection) async throws -> Head? {
        guard
            let row = try await connection.query(
                """
                SELECT seq, hash, body FROM key_statements WHERE family_member_id = \(familyMemberID)
                ORDER BY seq DESC LIMIT 1
                """
            ).first
        else { return nil }
        let (seq, hash, body) = try row.decode(Int.self, Data.self, Data.self)
        return Head(seq: seq, hash: hash, statement: try CanonicalJSON.decode(KeyStatement.self, from: body))
    }

    /// Statements after `seq`, oldest first, at most `pageLimit`.
    static func list(_ familyMemberID: UUID, after seq: Int, on connection: PostgresConnection) async throws -> [SignedKeyStatement] {
        var statements = try await connection.query(
            """
            SELECT body, signature, new_owner_signature, recovery_signature, device_approvals FROM key_statements
            WHERE family_member_id = \(familyMemberID) AND seq > \(seq)
            ORDER BY seq LIMIT \(pageLimit)
            """
        ).map { row in
            let (body, signature, newOwnerSignature, recoverySignature, approvals) = try row.decode(
                Data.self, Data.self, Data?.self, Data?.self, Data?.self)
            return SignedKeyStatement(
                statement: try CanonicalJSON.decode(KeyStatement.self, from: body), signature: signature,
                newOwnerSignature: newOwnerSignature, recoverySignature: recoverySignature,
                deviceApprovals: try approvals.map { try CanonicalJSON.decode([DeviceApproval].self, from: $0) })
        }
        // A rekey is served with the identity rotation it follows, which verifiers hold it to.
        for index in statements.indices where statements[index].statement.kind == .rekey {
            if let newKey = statements[index].statement.newOwner?.identityPublicKey {
                statements[index].rotation = try await IdentityRotationStore.rotation(to: newKey, on: connection)
            }
        }
        return statements
    }

    /// A rekey follows the caller's applied rotation from the key the history names (a pending
    /// one is not in `identity_rotations`). No clock is checked here: a rotation this service
    /// applies is approved by the recovery key or an hour old (`IdentityRotation.rekeyFloor`),
    /// and verifiers hold each rekey to that by their own clocks.
    private static func checkRekeyFollowsRotation(from signer: Data, to newKey: Data, on connection: PostgresConnection) async throws {
        guard let rotation = try await IdentityRotationStore.rotation(to: newKey, on: connection),
            rotation.statement.previousIdentityPublicKey == signer
        else {
            throw GrantRules.invalidKeyStatement("a rekey moves the family member from its owner key to the key a rotation replaced it with")
        }
    }

    /// The recovery public key the family member's history names for its current owner: the
    /// one in the owner's `create` or `adopt` statement (none after a `transfer` until the new
    /// owner adopts). Verifiers accept a transfer before its `not_before` only with its signature.
    static func ownerRecoveryKey(_ familyMemberID: UUID, on connection: PostgresConnection) async throws -> Data? {
        guard let row = try await connection.query(
            """
            SELECT body FROM key_statements
            WHERE family_member_id = \(familyMemberID) AND kind IN ('create', 'transfer', 'adopt')
            ORDER BY seq DESC LIMIT 1
            """
        ).first else { return nil }
        return try CanonicalJSON.decode(KeyStatement.self, from: try row.decode(Data.self, column: 0)).recoveryPublicKey
    }

    /// Checks `signed` against the head and what the change (already written in this
    /// transaction) leaves, then appends it. Throws a `RuleViolation` and the transaction rolls back.
    ///
    /// - Parameter changed: the holders whose copy this change stored, with the wrapped bytes.
    /// - Parameter newOwner: for a `transfer`, the user ownership passes to.
    static func record(
        _ signed: SignedKeyStatement?, kind: KeyStatement.Kind, familyMemberID: UUID, caller: UUID,
        changed: [UUID: Data], revokedUserID: UUID? = nil, newOwner: UUID? = nil, on connection: PostgresConnection
    ) async throws {
        guard let signed else { throw GrantRules.keyStatementRequired }
        let head = try await head(familyMemberID, on: connection)
        let callerKey = try await identityKey(of: caller, on: connection)
        if let named = signed.statement.recoveryPublicKey {
            let registered = try await connection.query(
                "SELECT recovery_public_key FROM users WHERE user_id = \(caller)"
            ).first?.decode(Data?.self, column: 0)
            guard named == registered else {
                throw GrantRules.invalidKeyStatement("recovery_public_key is not your registered recovery key")
            }
        }
        let signer: Data
        var expectedNewOwner: KeyStatement.NewOwner?
        switch (kind, head) {
        case (.create, _):
            signer = callerKey
        case (_, nil):
            throw GrantRules.invalidKeyStatement("this family member has no key history to extend")
        case (.rekey, let head?):
            signer = GrantRules.effectiveOwnerKey(after: head.statement)
            expectedNewOwner = KeyStatement.NewOwner(userID: caller, identityPublicKey: callerKey)
            try await checkRekeyFollowsRotation(from: signer, to: callerKey, on: connection)
        case (_, let head?):
            signer = GrantRules.effectiveOwnerKey(after: head.statement)
            guard signer == callerKey else {
                throw GrantRules.invalidKeyStatement(
                    "the key history names another owner key than your current identity key (re-key your copies first)")
            }
            if kind == .transfer, let newOwner {
                expectedNewOwner = KeyStatement.NewOwner(
                    userID: newOwner, identityPublicKey: try await identityKey(of: newOwner, on: connection))
            }
        }
        let current = try await connection.query(
            "SELECT current_fmk_version FROM family_members WHERE family_member_id = \(familyMemberID)"
        ).first!.decode(Int.self, column: 0)
        let holders = try await connection.query(
            """
            SELECT grantee_user_id FROM access_grants WHERE family_member_id = \(familyMemberID) AND revoked_at IS NULL
            """
        ).map { try $0.decode(UUID.self, column: 0) }
        var copies: [UUID: (wrapped: Data, fingerprint: Data)] = [:]
        let agreementKeys = try await agreementKeys(of: Array(changed.keys), on: connection)
        for (userID, wrapped) in changed {
            copies[userID] = (wrapped, KeyStatement.fingerprint(ofAgreementKey: agreementKeys[userID] ?? Data()))
        }
        try GrantRules.checkKeyStatement(
            signed,
            KeyStatementFacts(
                familyMemberID: familyMemberID, kind: kind, headSeq: head?.seq ?? 0, headHash: head?.hash, signer: signer,
                ownerUserID: caller, fmkVersion: current, holders: Set(holders), changed: copies,
                revokedUserID: revokedUserID, newOwner: expectedNewOwner))
        let body = try CanonicalJSON.encode(signed.statement)
        try await connection.execute(
            """
            INSERT INTO key_statements
                (family_member_id, seq, fmk_version, kind, body, signature, hash, new_owner_signature, recovery_signature,
                 device_approvals)
            VALUES (\(familyMemberID), \(signed.statement.seq), \(signed.statement.fmkVersion),
                    \(signed.statement.kind.rawValue), \(body), \(signed.signature), \(try signed.hash()),
                    \(signed.newOwnerSignature), \(signed.recoverySignature), \(try signed.deviceApprovals.map { try CanonicalJSON.encode($0) }))
            """)
    }

    /// The agreement keys of these users, one query for all of them (absent users are absent).
    static func agreementKeys(of userIDs: [UUID], on connection: PostgresConnection) async throws -> [UUID: Data] {
        guard !userIDs.isEmpty else { return [:] }
        var keys: [UUID: Data] = [:]
        for row in try await connection.query(
            "SELECT user_id, agreement_public_key FROM users WHERE user_id = ANY(\(PostgresArray(userIDs)))")
        {
            let (userID, key) = try row.decode(UUID.self, Data.self)
            keys[userID] = key
        }
        return keys
    }

    private static func identityKey(of userID: UUID, on connection: PostgresConnection) async throws -> Data {
        guard
            let key = try await connection.query("SELECT identity_public_key FROM users WHERE user_id = \(userID)")
                .first?.decode(Data.self, column: 0)
        else { throw APIError.notFound("user") }
        return key
    }
}
