import Foundation
import RescindCrypto
import RescindProtocol
import RescindTestSupport
import Testing

@testable import GrantService
@testable import RescindClient

/// The security delay of an ownership transfer is enforced by every client, not only by the grant
/// service: the owner's `transfer` statement names its own `not_before`, and a verifier takes it
/// before then only with the recovery key's signature that the owner's `create` statement named.
/// A compromised grant service — full write access to its database — that applies a pending
/// transfer early (a thief's, say, before the owner's iPad can veto it) moves nobody's idea of who
/// owns the family member.
@Suite(.serialized) struct TransferDelayTests {
    /// The compromised service plays first: the thief's transfer from the owner's phone is pending,
    /// and the service's database says its delay ran out, so the service applies it. The owner's
    /// iPad and phone, the new owner, another grantee and a device verifying for the first time all
    /// refuse the history; the new owner cannot adopt. Only once each client's own clock has passed
    /// the statement's `not_before` does the history read as the new owner's.
    @Test func aServiceApplyingAPendingTransferEarlyIsRefusedByEveryVerifier() async throws {
        try await GrantServiceHarness.with { service in
            let owner = try await GovernedOperationTests.owner(on: service)
            let other = try await service.user("Adult C")
            try await owner.phone.grant(owner.emma, to: other.keys.userID)
            let readers = [owner.iPad, owner.phone, owner.grantee, other]
            for reader in readers { _ = try await reader.currentFMK(owner.emma) }

            let begun = try await owner.phone.transferOwnership(owner.emma, to: owner.grantee.keys.userID)
            let notBefore = try #require(begun.transfer?.statement?.statement.notBefore)
            #expect(begun.state == .pending && begun.effectiveAt >= notBefore)
            // The compromised service's database says the delay ran out; it applies the transfer.
            #expect(try await service.elapseSecurityDelay(of: owner.userID, listingWith: owner.iPad).first?.state == .applied)
            #expect(try await other.client.familyMember(owner.emma).ownerUserID == owner.grantee.keys.userID)

            for reader in readers {
                await expectKeyHistoryRefused(.ungovernedChange) { _ = try await reader.currentFMK(owner.emma) }
            }
            let newLaptop = try await owner.grantee.addDevice(name: "Adult B's laptop")
            await expectKeyHistoryRefused(.ungovernedChange) { _ = try await newLaptop.verifiedHistory(owner.emma) }
            await expectKeyHistoryRefused(.ungovernedChange) { try await owner.grantee.adoptOwnership(owner.emma) }
            await expectKeyHistoryRefused(.ungovernedChange) { _ = try await other.readRecords(owner.emma) }

            // The delay, by the client's own clock, ran out: the transfer is in effect.
            var later = owner.grantee
            later.clock = { Date().addingTimeInterval(KeyStatement.minimumDelay + 60) }
            #expect(try await later.verifiedHistory(owner.emma).ownerUserID == owner.grantee.keys.userID)
            try await later.adoptOwnership(owner.emma)
            #expect(try await later.readRecords(owner.emma) == owner.records)
        }
    }

    /// With the recovery words, the owner hands Emma over at once: the approval signs the transfer
    /// statement, and every verifier takes it now. The new owner's `adopt` names their own recovery
    /// key, with which they hand Emma back at once.
    @Test func theRecoveryKeyPutsATransferInEffectAtOnceForEveryVerifier() async throws {
        try await GrantServiceHarness.with { service in
            let owner = try await GovernedOperationTests.owner(on: service)
            let other = try await service.user("Adult C")
            try await owner.phone.grant(owner.emma, to: other.keys.userID)

            let applied = try await owner.phone.transferOwnershipAtOnce(owner.emma, to: owner.grantee.keys.userID)
            #expect(applied.state == .applied && applied.decidedBy == .recoveryKey)
            let transfer = try #require(try await other.client.keyStatements(owner.emma, after: 0).statements.last)
            #expect(transfer.statement.kind == .transfer && transfer.recoverySignature != nil)
            for reader in [owner.iPad, other] { _ = try await reader.currentFMK(owner.emma) }

            // B compared codes with A before handing Emma back (ownership goes only to pinned keys).
            let a = try await owner.grantee.client.user(owner.userID)
            try owner.grantee.pins.pin(
                owner.userID, .init(identityPublicKey: a.identityPublicKey, agreementPublicKey: a.agreementPublicKey, source: .comparedCode))
            // Before adopting, the history names no recovery key of the new owner's.
            let early = try await owner.grantee.transferOwnership(owner.emma, to: owner.userID)
            await expectFailure(409, "recovery_key_not_named") {
                try await TestRecovery.key(for: owner.grantee.keys.userID).order(
                    .approve, for: owner.grantee.keys.userID, operationID: early.operationID, transfer: early.transfer?.statement,
                    through: owner.grantee.client)
            }
            _ = try await owner.grantee.client.cancelOperation(early.operationID)
            try await owner.grantee.adoptOwnership(owner.emma)
            let adopted = try #require(try await other.client.keyStatements(owner.emma, after: 0).statements.last?.statement)
            let granteesRecovery = try TestRecovery.key(for: owner.grantee.keys.userID)
            #expect(adopted.kind == .adopt && adopted.recoveryPublicKey == granteesRecovery.publicKey)

            #expect(try await owner.grantee.transferOwnershipAtOnce(owner.emma, to: owner.userID).state == .applied)
            #expect(try await owner.iPad.readRecords(owner.emma) == owner.records)
            #expect(try await other.readRecords(owner.emma) == owner.records)
        }
    }

    /// A transfer naming no delay of its own, or issued at another time than now; another device's
    /// approval; a recovery approval without the statement's signature, or with another user's
    /// recovery key's; a create statement naming a recovery key not the owner's: each a clear JSON
    /// error, and nothing changes.
    @Test func badTransfersAndApprovalsAreRefusedAndChangeNothing() async throws {
        try await GrantServiceHarness.with { service in
            let owner = try await GovernedOperationTests.owner(on: service)
            let b = owner.grantee.keys.userID
            let verified = try await owner.phone.verifiedKey(owner.emma)
            let toB = KeyStatement.NewOwner(userID: b, identityPublicKey: Data(owner.grantee.keys.identityKey.publicKey.rawRepresentation))
            let undelayed = try owner.phone.nextStatement(
                after: verified.entry, kind: .transfer, holders: verified.entry.head.statement.holders, newOwner: toB)
            await expectFailure(422, "invalid_key_statement") {
                try await owner.phone.client.transferOwnership(owner.emma, to: b, statement: undelayed)
            }
            var yesterday = undelayed.statement
            yesterday.issuedAt = Timestamp.truncated(Date().addingTimeInterval(-86_400))
            yesterday.notBefore = yesterday.issuedAt.addingTimeInterval(KeyStatement.minimumDelay)
            await expectFailure(422, "invalid_key_statement") {
                try await owner.phone.client.transferOwnership(owner.emma, to: b, statement: try owner.phone.signStatement(yesterday))
            }

            let begun = try await owner.phone.transferOwnership(owner.emma, to: b)
            await expectFailure(409, "recovery_key_required") { try await owner.iPad.client.approveOperation(begun.operationID) }
            let recovery = try TestRecovery.key(for: owner.userID)
            let anonymous = GrantServiceClient(baseURL: service.baseURL, tls: service.clientTLS)
            await expectFailure(422, "bad_signature") {
                try await recovery.order(.approve, for: owner.userID, operationID: begun.operationID, through: anonymous)
            }
            let statement = try #require(begun.transfer?.statement?.statement)
            let challenge = try await anonymous.recoveryChallenge(for: owner.userID)
            let action = RecoveryAction(
                userID: owner.userID, challengeID: challenge.challengeID, kind: .approve, operationID: begun.operationID,
                statementSignature: Data(try TestRecovery.key(for: b).signingKey.signature(for: try statement.signingInput())))
            await expectFailure(422, "bad_signature") {
                try await anonymous.recoveryAction(
                    SignedRecoveryAction(action: action, signature: Data(recovery.signingKey.signature(for: try action.signingInput(nonce: challenge.nonce)))))
            }
            await expectFailure(422, "invalid_field") {
                try await recovery.order(.vouch, for: owner.userID, deviceID: owner.iPad.deviceID, transfer: begun.transfer?.statement, through: anonymous)
            }
            #expect(try await owner.iPad.client.governedOperations().first { $0.operationID == begun.operationID }?.state == .pending)
            #expect(try await owner.grantee.client.familyMember(owner.emma).ownerUserID == owner.userID)
            #expect(try await owner.iPad.client.keyStatements(owner.emma, after: 0).statements.map(\.statement.kind) == [.create, .grant])

            // A create statement naming another user's recovery key as the owner's.
            let id = UUID()
            let fmk = SecretKey()
            let wrapped = Data(try FMKWrapping.wrapForOwner(fmk, familyMemberID: id, version: 1, masterKey: owner.phone.keys.masterKey))
            let create = try owner.phone.signStatement(
                KeyStatement(
                    familyMemberID: id, seq: 1, kind: .create, fmkVersion: 1, previousHash: nil, ownerUserID: owner.userID,
                    signerIdentityKey: Data(owner.phone.keys.identityKey.publicKey.rawRepresentation),
                    holders: [owner.phone.ownHolder(wrapped)], fmkCommitment: Data(FMKCommitment.commit(fmk, familyMemberID: id, version: 1)),
                    issuedAt: Date(), recoveryPublicKey: try TestRecovery.key(for: b).publicKey))
            await expectFailure(422, "invalid_key_statement") {
                try await owner.phone.client.createFamilyMember(CreateFamilyMemberRequest(familyMemberID: id, wrappedFMK: wrapped, statement: create))
            }
            await expectFailure(404) { try await owner.phone.client.familyMember(id) }
        }
    }
}
