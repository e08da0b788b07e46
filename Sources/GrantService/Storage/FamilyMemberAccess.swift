import Foundation
import RescindPostgres
import RescindServiceSupport

/// What a user may do with a family member, read in the caller's transaction.
struct FamilyMemberAccess: Sendable {
    enum Standing: Sendable {
        /// Holds an active grant.
        case active
        /// Held a grant that was revoked (and not yet purged).
        case revoked
        /// Never held one.
        case none
    }

    let familyMemberID: UUID
    /// Whose access this is.
    let userID: UUID
    let ownerUserID: UUID
    let currentFMKVersion: Int
    let createdAt: Date
    let standing: Standing
    let isOwner: Bool

    /// Loads the family member and the caller's standing, optionally locking its row.
    ///
    /// Every write to a family member's records, grants, version or owner takes the
    /// row lock first. That serialises its writers, which keeps the record change
    /// sequence in commit order (so incremental sync never skips a change) and makes
    /// a concurrent revocation see a stable set of records.
    static func load(
        _ familyMemberID: UUID, for userID: UUID, lock: Bool = false, on connection: PostgresConnection
    ) async throws -> FamilyMemberAccess {
        let rows = try await connection.query(
            """
            SELECT f.owner_user_id, f.current_fmk_version, f.created_at,
                   (SELECT bool_or(g.revoked_at IS NULL) FROM access_grants g
                    WHERE g.family_member_id = f.family_member_id AND g.grantee_user_id = \(userID))
            FROM family_members f WHERE f.family_member_id = \(familyMemberID)
            \(unescaped: lock ? "FOR UPDATE OF f" : "")
            """)
        guard let row = rows.first else { throw APIError.notFound("family member") }
        let (owner, version, createdAt, active) = try row.decode(UUID.self, Int.self, Date.self, Bool?.self)
        let standing: Standing = switch active {
        case true?: .active
        case false?: .revoked
        case nil: .none
        }
        return FamilyMemberAccess(
            familyMemberID: familyMemberID, userID: userID, ownerUserID: owner, currentFMKVersion: version,
            createdAt: createdAt, standing: standing, isOwner: owner == userID)
    }

    /// Reading records or keys needs an active grant (`GrantRules.checkCanRead`).
    func requireActiveGrant() throws {
        try GrantRules.checkCanRead(standing)
    }

    /// Writing records needs an active grant that no revocation has begun to end
    /// (`GrantRules.checkCanWrite`). Needs the row lock (`load(lock: true)`), which `begin`
    /// also takes, so a write and a begin never interleave.
    func requireWriteAccess(on connection: PostgresConnection) async throws {
        try GrantRules.checkCanRead(standing)
        let pending = try await connection.query(
            """
            SELECT EXISTS (SELECT 1 FROM revocation_stagings
                           WHERE family_member_id = \(familyMemberID) AND revoked_user_id = \(userID)
                             AND expires_at > now())
            """
        ).first!.decode(Bool.self, column: 0)
        try GrantRules.checkCanWrite(standing, revocationPending: pending)
    }

    /// Granting, revoking and transferring are the owner's alone (`GrantRules.checkIsOwner`).
    func requireOwner() throws {
        try GrantRules.checkIsOwner(isOwner, standing: standing)
    }
}
