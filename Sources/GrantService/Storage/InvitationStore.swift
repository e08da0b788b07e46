import Foundation
import RescindPostgres
import RescindProtocol

/// Invitations and their single acceptance, kept as signed.
struct InvitationStore: Sendable {
    let pool: PostgresConnectionPool

    /// The caller's registered keys (identity, agreement).
    func keys(of userID: UUID) async throws -> (identity: Data, agreement: Data) {
        try await pool.withConnection { connection in
            guard let row = try await connection.query(
                "SELECT identity_public_key, agreement_public_key FROM users WHERE user_id = \(userID)"
            ).first else { throw RuleViolation.notFound("user") }
            let (identity, agreement) = try row.decode(Data.self, Data.self)
            return (identity, agreement)
        }
    }

    /// Stores a checked invitation; a family member it names must be the inviter's own.
    func create(_ signed: SignedInvitation) async throws -> InvitationResponse {
        let invitation = signed.invitation
        let body = try CanonicalJSON.encode(signed)
        return try await pool.transaction { connection in
            if let familyMemberID = invitation.familyMemberID {
                guard let row = try await connection.query(
                    "SELECT owner_user_id FROM family_members WHERE family_member_id = \(familyMemberID)"
                ).first else { throw RuleViolation.notFound("family member") }
                guard try row.decode(UUID.self, column: 0) == invitation.inviterUserID else { throw GrantRules.ownerOnly }
            }
            let inserted = try await connection.query(
                """
                INSERT INTO invitations (invitation_id, inviter_user_id, family_member_id, invitation, created_at, expires_at)
                VALUES (\(invitation.invitationID), \(invitation.inviterUserID), \(invitation.familyMemberID), \(body),
                        \(invitation.createdAt), \(invitation.expiresAt))
                ON CONFLICT (invitation_id) DO NOTHING
                RETURNING 1
                """)
            guard !inserted.isEmpty else {
                throw RuleViolation(kind: .conflict, code: "invitation_exists", message: "an invitation with this id exists")
            }
            return InvitationResponse(invitation: signed, status: .pending)
        }
    }

    /// An invitation as stored and its acceptance, if any.
    func invitation(_ id: UUID) async throws -> (SignedInvitation, SignedInvitationAcceptance?) {
        try await pool.withConnection { connection in
            guard let row = try await connection.query(
                """
                SELECT i.invitation, a.acceptance FROM invitations i
                LEFT JOIN invitation_acceptances a USING (invitation_id)
                WHERE i.invitation_id = \(id)
                """
            ).first else { throw RuleViolation.notFound("invitation") }
            let (invitation, acceptance) = try row.decode(Data.self, Data?.self)
            return (
                try CanonicalJSON.decode(SignedInvitation.self, from: invitation),
                try acceptance.map { try CanonicalJSON.decode(SignedInvitationAcceptance.self, from: $0) }
            )
        }
    }

    /// Stores the first acceptance; `check` sees the invitation and whether it was answered,
    /// inside the transaction that holds it locked.
    func accept(
        _ signed: SignedInvitationAcceptance, check: (Invitation, _ alreadyAccepted: Bool) throws -> Void
    ) async throws -> InvitationResponse {
        let id = signed.acceptance.invitationID
        let body = try CanonicalJSON.encode(signed)
        return try await pool.transaction { connection in
            guard let row = try await connection.query(
                """
                SELECT i.invitation, EXISTS (SELECT 1 FROM invitation_acceptances a WHERE a.invitation_id = i.invitation_id)
                FROM invitations i WHERE i.invitation_id = \(id) FOR UPDATE
                """
            ).first else { throw RuleViolation.notFound("invitation") }
            let (stored, accepted) = try row.decode(Data.self, Bool.self)
            let invitation = try CanonicalJSON.decode(SignedInvitation.self, from: stored)
            try check(invitation.invitation, accepted)
            try await connection.execute(
                """
                INSERT INTO invitation_acceptances (invitation_id, invitee_user_id, acceptance)
                VALUES (\(id), \(signed.acceptance.inviteeUserID), \(body))
                """)
            return InvitationResponse(invitation: invitation, status: .accepted)
        }
    }
}
