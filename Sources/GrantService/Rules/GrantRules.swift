import Foundation
import RescindCrypto
import RescindProtocol

/// The grant service's business rules as pure functions: what a valid request is and who may do
/// what, apart from SQL (the stores load the facts and call these) and from HTTP statuses (the
/// HTTP layer maps a `RuleViolation`). Each is unit-tested without a database.
enum GrantRules {
    // MARK: Keys

    /// A wrapped FMK is RFC 3394 of a 256-bit key: exactly `FMKWrapping.wrappedByteCount` bytes.
    static let invalidWrappedKey = RuleViolation.refused(
        "invalid_wrapped_key", "a wrapped FMK is exactly \(FMKWrapping.wrappedByteCount) bytes (RFC 3394 of a 256-bit key)")

    static func checkWrappedFMK(_ bytes: Data) throws(RuleViolation) {
        guard bytes.count == FMKWrapping.wrappedByteCount else { throw invalidWrappedKey }
    }

    // MARK: Revocations

    /// A reason must fit the event that will carry it (`MessageLimits`): one its consumers would
    /// refuse is refused here.
    static func checkReason(_ reason: String?) throws(RuleViolation) {
        if let reason, !MessageLimits.isSafeText(reason, maxLength: MessageLimits.reasonLength) {
            throw .malformed("reason is limited to \(MessageLimits.reasonLength) characters, without control characters")
        }
    }

    /// Only a user with active access can be revoked, and never the owner.
    static func checkRevocable(_ revokedUserID: UUID, ownerUserID: UUID, hasActiveAccess: Bool) throws(RuleViolation) {
        guard revokedUserID != ownerUserID else {
            throw .refused("cannot_revoke_owner", "the owner cannot be revoked; transfer ownership first")
        }
        guard hasActiveAccess else { throw .refused("not_a_grantee", "this user has no active access to revoke") }
    }

    /// An upload batch names each record at most once.
    static func checkBatch(_ recordIDs: [UUID]) throws(RuleViolation) {
        guard Set(recordIDs).count == recordIDs.count else { throw .refused("duplicate_record", "a batch names each record at most once") }
    }

    /// A revocation moves the family member exactly one FMK version up.
    static func checkNewVersion(_ requested: Int, from current: Int) throws(RuleViolation) {
        guard requested == current + 1 else {
            throw .refused("invalid_version", "this revocation moves to FMK version \(current + 1)")
        }
    }

    /// The new grants of a revocation re-wrap the FMK for exactly the remaining grantees: never
    /// the revoked user, nobody left out, nobody added; each well-formed, and self-wrapped only for
    /// the owner. (That each ecdh copy names the grantee's current key is checked against the
    /// database by the store.)
    /// A rotation (`revokedUserID` nil) re-wraps it for every active grantee.
    static func checkNewGrants(
        _ grants: [NewGrant], activeGrantees: Set<UUID>, revokedUserID: UUID?, ownerUserID: UUID
    ) throws(RuleViolation) {
        let named = grants.map(\.granteeUserID)
        if let revokedUserID {
            guard activeGrantees.contains(revokedUserID) else { throw .refused("not_a_grantee", "this user no longer has access") }
            guard !named.contains(revokedUserID) else {
                throw .refused("grant_for_revoked_user", "the new FMK must not be wrapped for the revoked user")
            }
        }
        let remaining = revokedUserID.map { activeGrantees.subtracting([$0]) } ?? activeGrantees
        guard Set(named).count == named.count, Set(named) == remaining else {
            throw .refused("grants_mismatch", "the commit must carry one new wrapped FMK for each remaining grantee, and no other")
        }
        for grant in grants {
            try checkWrappedFMK(grant.wrappedFMK)
            guard grant.wrapping == .ecdh || grant.granteeUserID == ownerUserID else {
                throw .refused("invalid_wrapping", "only the owner's own copy can be self-wrapped")
            }
            guard grant.wrapping != .ecdh || grant.granteeAgreementPublicKey != nil else {
                throw .refused("invalid_wrapping", "an ecdh copy names the grantee key it was wrapped to")
            }
        }
    }
}
