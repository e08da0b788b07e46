/// Who may do what with a family member, from facts the store loaded (`FamilyMemberAccess`).
extension GrantRules {
    static let accessRevoked = RuleViolation(
        kind: .notAllowed, code: "access_revoked", message: "your access to this family member was revoked")
    static let revocationPending = RuleViolation(
        kind: .notAllowed, code: "revocation_pending",
        message: "your access to this family member is being revoked; records are read-only")
    static let noAccess = RuleViolation(kind: .notAllowed, code: "forbidden", message: "you have no access to this family member")
    static let ownerOnly = RuleViolation(kind: .notAllowed, code: "forbidden", message: "only the family member's owner can do this")

    /// Reading records or keys needs an active grant.
    static func checkCanRead(_ standing: FamilyMemberAccess.Standing) throws(RuleViolation) {
        switch standing {
        case .active: return
        case .revoked: throw accessRevoked
        case .none: throw noAccess
        }
    }

    /// Reading the key history needs a grant, active or revoked: a revoked user's device reads
    /// the owner's statement that excludes it before it erases its copy.
    static func checkHeldAccess(_ standing: FamilyMemberAccess.Standing) throws(RuleViolation) {
        guard case .none = standing else { return }
        throw noAccess
    }

    /// Writing records needs an active grant that no revocation has begun to end, so that the
    /// user being revoked cannot add, change or delete records between `begin` and `commit`
    /// (and so cannot delay or block their own revocation).
    static func checkCanWrite(_ standing: FamilyMemberAccess.Standing, revocationPending: Bool) throws(RuleViolation) {
        try checkCanRead(standing)
        if revocationPending { throw Self.revocationPending }
    }

    /// Granting, revoking and transferring are the owner's alone; a former grantee hears that
    /// their access was revoked rather than that they are not the owner.
    static func checkIsOwner(_ isOwner: Bool, standing: FamilyMemberAccess.Standing) throws(RuleViolation) {
        guard isOwner else {
            try checkCanRead(standing)
            throw ownerOnly
        }
    }
}
