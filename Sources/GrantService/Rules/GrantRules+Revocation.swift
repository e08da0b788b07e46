import Foundation

/// The rest of what a valid revocation is, checked against counts and facts `RevocationStore`
/// reads in its transaction.
extension GrantRules {
    static let staleIdentityKey = RuleViolation(
        kind: .conflict, code: "stale_identity_key",
        message: "the FMK was wrapped to a key that is not the grantee's current one (their identity was rotated); fetch it again")

    static func versionConflict(current: Int) -> RuleViolation {
        RuleViolation(kind: .conflict, code: "version_conflict", message: "the family member is at FMK version \(current); refresh and retry")
    }

    /// A user to revoke everywhere must exist and hold access to at least one family member of the caller's.
    static func checkRevocableEverywhere(userExists: Bool, familyMembersShared: Int) throws(RuleViolation) {
        guard userExists else { throw .notFound("user") }
        guard familyMembersShared > 0 else {
            throw .refused("not_a_grantee", "this user has no access to any family member you own")
        }
    }

    /// Only the device that began a revocation (or rotation) continues it — uploads into it,
    /// commits or abandons it — and only before it expires. Another user is refused as before
    /// (`forbidden`); another device of the same user is refused too (`staging_owned_by_other_device`):
    /// a device the thief enrolled with a stolen identity key holds a token of the same user, and
    /// must neither tamper with nor abandon the owner's revocation in flight (migration 0017).
    static func checkContinues(
        startedBy: (user: UUID, device: UUID)?, caller: (user: UUID, device: UUID)
    ) throws(RuleViolation) {
        guard let startedBy else { throw .notFound("revocation (or it expired)") }
        guard startedBy.user == caller.user else {
            throw RuleViolation(
                kind: .notAllowed, code: "forbidden", message: "only the user who began this revocation can continue it")
        }
        guard startedBy.device == caller.device else { throw stagingOwnedByOtherDevice }
    }

    /// A device retired while its call ran (a begin racing the retirement): what every later call
    /// of the device hears too.
    static let deviceRetired = RuleViolation(
        kind: .unauthenticated, code: "device_retired",
        message: "this device was retired by its user; it can no longer authenticate")

    static func checkDeviceActive(_ active: Bool) throws(RuleViolation) {
        guard active else { throw deviceRetired }
    }

    static let stagingOwnedByOtherDevice = RuleViolation(
        kind: .notAllowed, code: "staging_owned_by_other_device",
        message: "this revocation was begun on another of your devices: only that device can continue or abandon it "
            + "(retiring that device abandons it at once; otherwise it expires)")

    /// Another upload of a record in this batch, to the same revocation, committed while this one
    /// ran (one batch sent twice at once): this one is rolled back; sending it again replaces the other.
    static let uploadInFlight = RuleViolation(
        kind: .conflict, code: "upload_in_flight",
        message: "another upload of a record in this batch was staged while this one ran; send this batch again")

    /// Every record of an upload batch is the family member's (live or deleted).
    static func checkBatchOwned(batch: Int, owned: Int) throws(RuleViolation) {
        guard owned == batch else {
            throw .refused("unknown_records", "\(batch - owned) record(s) in the batch are not this family member's")
        }
    }

    /// The family member is still at the version the revocation began from.
    static func checkUnchangedVersion(current: Int, from: Int) throws(RuleViolation) {
        guard current == from else { throw versionConflict(current: current) }
    }

    /// No edit is lost: every record that existed unchanged when the revocation began was
    /// re-encrypted (`records_missing`, a client's bug, otherwise), and none changed since it was
    /// downloaded (`records_changed`: the client re-encrypts those from the change feed and commits
    /// again). A record deleted since is simply not swapped in: its deletion stands.
    static func checkNoEditIsLost(total: Int, missing: Int, changed: Int, examples: String?) throws(RuleViolation) {
        guard missing == 0 else { throw .refused("records_missing", "\(missing) of \(total) record(s) were not re-encrypted") }
        guard changed == 0 else {
            throw RuleViolation(
                kind: .conflict, code: "records_changed",
                message: "\(changed) record(s) changed since they were re-encrypted (\(examples ?? "")); "
                    + "re-encrypt them from the change feed and commit again")
        }
    }

    /// The swap replaced every record it was to replace.
    static func checkAllSwapped(swapped: Int, of count: Int) throws(RuleViolation) {
        guard swapped == count else {
            throw .refused("records_missing", "\(count - swapped) of \(count) record(s) were not re-encrypted")
        }
    }
}
