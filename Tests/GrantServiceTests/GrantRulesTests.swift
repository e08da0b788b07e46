import Foundation
import RescindCrypto
import RescindProtocol
import Testing

@testable import GrantService

/// The grant service's business rules, as pure functions: no database, no broker, no HTTP.
@Suite struct GrantRulesTests {
    let owner = UUID()
    let revoked = UUID()
    let kept = UUID()
    let wrapped = Data(repeating: 7, count: FMKWrapping.wrappedByteCount)

    @Test func aWrappedFMKIsExactlyTheCryptoModulesSize() throws {
        #expect(FMKWrapping.wrappedByteCount == 40)
        try GrantRules.checkWrappedFMK(wrapped)
        for count in [0, 32, FMKWrapping.wrappedByteCount - 1, FMKWrapping.wrappedByteCount + 1] {
            #expect(throws: GrantRules.invalidWrappedKey) { try GrantRules.checkWrappedFMK(Data(count: count)) }
        }
        #expect(GrantRules.invalidWrappedKey.code == "invalid_wrapped_key")
        #expect(GrantRules.invalidWrappedKey.kind == .refused)
    }

    @Test func theOwnerCannotBeRevokedAndOnlyActiveGranteesCanBe() throws {
        #expect(throws: RuleViolation.refused("cannot_revoke_owner", "the owner cannot be revoked; transfer ownership first")) {
            try GrantRules.checkRevocable(owner, ownerUserID: owner, hasActiveAccess: true)
        }
        let notGrantee = try #require(Self.violation { try GrantRules.checkRevocable(revoked, ownerUserID: owner, hasActiveAccess: false) })
        #expect(notGrantee.code == "not_a_grantee" && notGrantee.kind == .refused)
        try GrantRules.checkRevocable(revoked, ownerUserID: owner, hasActiveAccess: true)
    }

    @Test func aReasonFitsTheEventThatCarriesIt() throws {
        try GrantRules.checkReason(nil)
        try GrantRules.checkReason("phone stolen")
        let long = try #require(Self.violation { try GrantRules.checkReason(String(repeating: "x", count: MessageLimits.reasonLength + 1)) })
        #expect(long.kind == .malformed && long.code == "bad_request")
        #expect(Self.violation { try GrantRules.checkReason("line\u{7}bell") }?.kind == .malformed)
    }

    @Test func aBatchNamesEachRecordOnce() throws {
        let record = UUID()
        try GrantRules.checkBatch([record, UUID()])
        #expect(Self.violation { try GrantRules.checkBatch([record, record]) }?.code == "duplicate_record")
    }

    @Test func aRevocationMovesExactlyOneVersionUp() throws {
        try GrantRules.checkNewVersion(4, from: 3)
        for requested in [3, 5, 0] {
            #expect(Self.violation { try GrantRules.checkNewVersion(requested, from: 3) }?.code == "invalid_version")
        }
    }

    /// The commit re-wraps the FMK for exactly the remaining grantees.
    @Test func theNewGrantsCoverExactlyTheRemainingGrantees() throws {
        let active: Set = [owner, revoked, kept]
        let ownCopy = NewGrant(granteeUserID: owner, wrapping: .`self`, wrappedFMK: wrapped)
        let keptCopy = NewGrant(granteeUserID: kept, wrapping: .ecdh, wrappedFMK: wrapped, granteeAgreementPublicKey: Data(count: 32))
        func check(_ grants: [NewGrant], active: Set<UUID>? = nil) -> String? {
            Self.violation {
                try GrantRules.checkNewGrants(grants, activeGrantees: active ?? [owner, revoked, kept], revokedUserID: revoked, ownerUserID: owner)
            }?.code
        }
        #expect(check([ownCopy, keptCopy]) == nil)
        #expect(check([ownCopy, keptCopy], active: active.subtracting([revoked])) == "not_a_grantee")
        #expect(check([ownCopy, keptCopy, NewGrant(granteeUserID: revoked, wrapping: .ecdh, wrappedFMK: wrapped, granteeAgreementPublicKey: Data(count: 32))]) == "grant_for_revoked_user")
        #expect(check([ownCopy]) == "grants_mismatch")
        #expect(check([ownCopy, keptCopy, keptCopy]) == "grants_mismatch")
        #expect(check([ownCopy, keptCopy, NewGrant(granteeUserID: UUID(), wrapping: .ecdh, wrappedFMK: wrapped, granteeAgreementPublicKey: Data(count: 32))]) == "grants_mismatch")
        #expect(check([ownCopy, NewGrant(granteeUserID: kept, wrapping: .ecdh, wrappedFMK: Data(count: 39), granteeAgreementPublicKey: Data(count: 32))]) == "invalid_wrapped_key")
        #expect(check([ownCopy, NewGrant(granteeUserID: kept, wrapping: .`self`, wrappedFMK: wrapped)]) == "invalid_wrapping")
        #expect(check([ownCopy, NewGrant(granteeUserID: kept, wrapping: .ecdh, wrappedFMK: wrapped)]) == "invalid_wrapping")
    }

    @Test func eachKindOfViolationHasOneStatus() {
        #expect(RuleViolation.malformed("x").apiError.status == .badRequest)
        #expect(RuleViolation.refused("c", "x").apiError.status == .unprocessableContent)
        #expect(RuleViolation(kind: .conflict, code: "c", message: "x").apiError.status == .conflict)
        #expect(GrantRules.invalidWrappedKey.apiError.code == "invalid_wrapped_key")
    }

    /// The violation `body` throws, `nil` when it throws none (or another error).
    static func violation(_ body: () throws -> Void) -> RuleViolation? {
        do {
            try body()
            return nil
        } catch {
            return error as? RuleViolation
        }
    }
}

/// Who may do what with a family member.
@Suite struct GrantAccessRulesTests {
    @Test func readingNeedsAnActiveGrant() throws {
        try GrantRules.checkCanRead(.active)
        #expect(GrantRulesTests.violation { try GrantRules.checkCanRead(.revoked) } == GrantRules.accessRevoked)
        #expect(GrantRulesTests.violation { try GrantRules.checkCanRead(.none) } == GrantRules.noAccess)
    }

    @Test func aUserBeingRevokedCannotWrite() throws {
        try GrantRules.checkCanWrite(.active, revocationPending: false)
        #expect(GrantRulesTests.violation { try GrantRules.checkCanWrite(.active, revocationPending: true) } == GrantRules.revocationPending)
        #expect(GrantRulesTests.violation { try GrantRules.checkCanWrite(.revoked, revocationPending: false) } == GrantRules.accessRevoked)
    }

    @Test func onlyTheOwnerGrantsRevokesAndTransfers() throws {
        try GrantRules.checkIsOwner(true, standing: .active)
        #expect(GrantRulesTests.violation { try GrantRules.checkIsOwner(false, standing: .active) } == GrantRules.ownerOnly)
        #expect(GrantRulesTests.violation { try GrantRules.checkIsOwner(false, standing: .revoked) } == GrantRules.accessRevoked)
        #expect(GrantRules.ownerOnly.apiError.status == .forbidden && GrantRules.accessRevoked.apiError.code == "access_revoked")
    }
}

/// What a valid revocation is, beyond its grants: checked against what the store counted.
@Suite struct GrantRevocationRulesTests {
    @Test func revokingEverywhereNeedsAUserWhoSharesSomething() throws {
        try GrantRules.checkRevocableEverywhere(userExists: true, familyMembersShared: 2)
        #expect(GrantRulesTests.violation { try GrantRules.checkRevocableEverywhere(userExists: false, familyMembersShared: 0) }?.apiError.status == .notFound)
        #expect(GrantRulesTests.violation { try GrantRules.checkRevocableEverywhere(userExists: true, familyMembersShared: 0) }?.code == "not_a_grantee")
    }

    @Test func onlyTheDeviceThatBeganARevocationContinuesIt() throws {
        let starter = (user: UUID(), device: UUID())
        try GrantRules.checkContinues(startedBy: starter, caller: starter)
        #expect(GrantRulesTests.violation { try GrantRules.checkContinues(startedBy: nil, caller: starter) }?.apiError.status == .notFound)
        let otherUser = GrantRulesTests.violation { try GrantRules.checkContinues(startedBy: (UUID(), starter.device), caller: starter) }
        #expect(otherUser?.apiError.status == .forbidden && otherUser?.code == "forbidden")
        // Another device of the same user (one the thief enrolled with the stolen identity key).
        let otherDevice = GrantRulesTests.violation { try GrantRules.checkContinues(startedBy: (starter.user, UUID()), caller: starter) }
        #expect(otherDevice?.apiError.status == .forbidden && otherDevice?.code == "staging_owned_by_other_device")
        // A begin whose device was retired while it ran.
        try GrantRules.checkDeviceActive(true)
        let retired = GrantRulesTests.violation { try GrantRules.checkDeviceActive(false) }
        #expect(retired?.apiError.status == .unauthorized && retired?.code == "device_retired")
    }

    @Test func noEditIsLost() throws {
        try GrantRules.checkNoEditIsLost(total: 10, missing: 0, changed: 0, examples: nil)
        #expect(GrantRulesTests.violation { try GrantRules.checkNoEditIsLost(total: 10, missing: 1, changed: 3, examples: nil) }?.code == "records_missing")
        let changed = GrantRulesTests.violation { try GrantRules.checkNoEditIsLost(total: 10, missing: 0, changed: 1, examples: "{a}") }
        #expect(changed?.code == "records_changed" && changed?.apiError.status == .conflict)
        #expect(GrantRulesTests.violation { try GrantRules.checkAllSwapped(swapped: 9, of: 10) }?.code == "records_missing")
        #expect(GrantRulesTests.violation { try GrantRules.checkBatchOwned(batch: 3, owned: 2) }?.code == "unknown_records")
        #expect(GrantRulesTests.violation { try GrantRules.checkUnchangedVersion(current: 3, from: 2) } == GrantRules.versionConflict(current: 3))
    }
}

@Suite struct GrantRulesRecordVersionTests {
    @Test func aRestoreFindsAKeptVersionOfThisFamilyMemberWithinTheRetention() throws {
        let now = Date()
        try GrantRules.checkRestorable(kept: (now, false), elsewhere: false, retentionDays: 30)
        let other = GrantRulesTests.violation { try GrantRules.checkRestorable(kept: (now, false), elsewhere: true, retentionDays: 30) }
        #expect(other?.code == "record_of_other_family_member" && other?.kind == .refused)
        let none = GrantRulesTests.violation { try GrantRules.checkRestorable(kept: nil, elsewhere: false, retentionDays: 30) }
        #expect(none?.code == "no_restorable_version" && none?.apiError.status == .notFound)
        let expired = GrantRulesTests.violation { try GrantRules.checkRestorable(kept: (now, true), elsewhere: false, retentionDays: 30) }
        #expect(expired?.code == "restore_window_passed" && expired?.apiError.status == .gone)
        #expect(expired?.message.contains("30 days") == true)
    }

    @Test func aCommitLeavesNoKeptVersionBehindAndAnUploadNamesOnlyThisFamilyMembersOnce() throws {
        try GrantRules.checkVersionsStaged(total: 3, unstaged: 0)
        let left = GrantRulesTests.violation { try GrantRules.checkVersionsStaged(total: 3, unstaged: 1) }
        #expect(left?.code == "records_changed" && left?.apiError.status == .conflict)
        let (a, b) = (UUID(), UUID())
        try GrantRules.checkVersionBatch([a, b], owned: 2)
        #expect(GrantRulesTests.violation { try GrantRules.checkVersionBatch([a, a], owned: 2) }?.kind == .malformed)
        #expect(GrantRulesTests.violation { try GrantRules.checkVersionBatch([a, b], owned: 1) }?.code == "unknown_versions")
    }
}
