import Foundation

/// Restorable records: what a restore may restore, from facts `RecordVersionStore` loaded.
extension GrantRules {
    /// A restore finds a version of the record kept for this family member, younger than the
    /// restore window; a record of another family member is refused as such.
    /// - Parameters:
    ///   - kept: the version asked for (or the latest), if this family member keeps one.
    ///   - elsewhere: the record id is another family member's (a live record or a kept version).
    static func checkRestorable(kept: (createdAt: Date, expired: Bool)?, elsewhere: Bool, retentionDays: Int) throws(RuleViolation) {
        if elsewhere {
            throw .refused("record_of_other_family_member", "this record belongs to another family member; restore it from there")
        }
        guard let kept else {
            throw RuleViolation(
                kind: .notFound, code: "no_restorable_version",
                message: "this family member keeps no deleted or overwritten version of this record")
        }
        guard !kept.expired else {
            throw RuleViolation(
                kind: .expired, code: "restore_window_passed",
                message: "this version was deleted or overwritten more than \(retentionDays) days ago and can no longer be restored")
        }
    }

    /// A revocation or rotation re-encrypts every kept version with the records: a commit that
    /// would leave one under the old FMK is refused (the client uploads them and commits again).
    static func checkVersionsStaged(total: Int, unstaged: Int) throws(RuleViolation) {
        guard unstaged == 0 else {
            throw RuleViolation(
                kind: .conflict, code: "records_changed",
                message: "\(unstaged) of \(total) deleted or overwritten version(s) were not re-encrypted; "
                    + "re-encrypt the family member's kept versions and commit again")
        }
    }

    /// An upload of versions names each at most once, and only this family member's.
    static func checkVersionBatch(_ versionIDs: [UUID], owned: Int) throws(RuleViolation) {
        guard Set(versionIDs).count == versionIDs.count else { throw .malformed("a batch names each version at most once") }
        guard owned == versionIDs.count else {
            throw .refused("unknown_versions", "\(versionIDs.count - owned) version(s) of the batch are not this family member's")
        }
    }
}
