import Foundation
import RescindCrypto
import RescindProtocol
import RescindTestSupport
import Testing

@testable import GrantService
@testable import RescindClient

/// An identity rotation moves the family members its user owns through `rekey` statements, and
/// every verifier holds those to the rotation they carry: taken an hour after the rotation was
/// signed, or at once when the recovery key the family member's history names approved it. Every
/// device holds the identity key, so a second device's approval brings a rotation to that hour,
/// not to now; only the recovery words make it immediate.
@Suite(.serialized) struct RekeyDelayTests {
    /// The thief, with a copy of the owner's phone, begins rotating the owner's identity to keys
    /// of its own, and a compromised grant service applies it at once. The client as shipped makes
    /// no rekey its verifiers would refuse; the thief's own client does, and the service stores it.
    /// The owner's iPad, both grantees and a device verifying for the first time all refuse Emma's
    /// history until an hour has passed since the thief signed the rotation: the floor a
    /// compromised service can shorten the delay to, not below.
    @Test func aServiceApplyingTheThiefsRotationEarlyMovesEmmaForNobody() async throws {
        try await GrantServiceHarness.with { service in
            let owner = try await GovernedOperationTests.owner(on: service)
            let other = try await service.user("Adult C")
            try await owner.phone.grant(owner.emma, to: other.keys.userID)
            let readers = [owner.iPad, owner.grantee, other]
            for reader in readers { _ = try await reader.currentFMK(owner.emma) }

            let thiefsKeys = UserKeys.generate(userID: owner.userID)
            let begun = try await owner.phone.registerRotation(to: thiefsKeys, currentGeneration: 1)
            #expect(begun.state == .pending)
            // The compromised service's database says the delay ran out; it applies the rotation.
            #expect(try await service.elapseSecurityDelay(of: owner.userID, listingWith: owner.iPad).first?.state == .applied)
            #expect(try await other.client.user(owner.userID).identityPublicKey == Data(thiefsKeys.identityKey.publicKey.rawRepresentation))

            var thief = owner.phone.withKeys(thiefsKeys)
            do {
                try await thief.rewrapHeldKeys(from: owner.phone.keys)
                Issue.record("the shipped client moved Emma to a rotation verifiers refuse")
            } catch let error as AgentError {
                #expect(error.code == .rotationNotDue, "\(error)")
            }
            #expect(try await other.client.keyStatements(owner.emma, after: 0).statements.map(\.statement.kind) == [.create, .grant, .grant])
            thief.clock = { Date().addingTimeInterval(KeyStatement.minimumDelay + 60) }
            #expect(try await thief.rewrapHeldKeys(from: owner.phone.keys).rewrapped == 1)
            let rekey = try #require(try await other.client.keyStatements(owner.emma, after: 0).statements.last)
            #expect(rekey.statement.kind == .rekey && rekey.rotation?.statement == begun.rotation?.statement)

            for reader in readers {
                await expectKeyHistoryRefused(.ungovernedChange) { _ = try await reader.currentFMK(owner.emma) }
            }
            let newLaptop = try await owner.grantee.addDevice(name: "Adult B's laptop")
            await expectKeyHistoryRefused(.ungovernedChange) { _ = try await newLaptop.verifiedHistory(owner.emma) }

            var anHourOn = other
            anHourOn.clock = { Date().addingTimeInterval(KeyStatement.minimumDelay + 60) }
            #expect(try await anHourOn.verifiedHistory(owner.emma).ownerIdentityKey == Data(thiefsKeys.identityKey.publicKey.rawRepresentation))
        }
    }

    /// The owner rotates from the iPad; the phone approves: the rotation stays pending until an
    /// hour after it began (and can still be vetoed), and nothing moves. The recovery words then
    /// approve it: it takes effect, the rotation is kept with their signature, Emma moves to the
    /// new key, and every reader takes that at once.
    @Test func aSecondDeviceBringsARotationToTheHourAndTheWordsToNow() async throws {
        try await GrantServiceHarness.with { service in
            let owner = try await GovernedOperationTests.owner(on: service)
            let newKeys = UserKeys.generate(userID: owner.userID)
            let begun = try await owner.iPad.registerRotation(to: newKeys, currentGeneration: 1)
            let floor = try #require(begun.rotation?.statement.issuedAt).addingTimeInterval(KeyStatement.minimumDelay)
            #expect(begun.effectiveAt > floor, "the deployment's delay (a day) is longer than the floor")

            let approved = try await owner.phone.client.approveOperation(begun.operationID)
            #expect(approved.state == .pending && abs(approved.effectiveAt.timeIntervalSince(floor)) < 1, "\(approved)")
            #expect(try await owner.iPad.client.governedOperations().first?.state == .pending)
            #expect(try await owner.grantee.client.user(owner.userID).identityGeneration == 1)

            let words = try TestRecovery.key(for: owner.userID)
            let applied = try #require(try await words.approve(approved, through: owner.iPad.client).operation)
            #expect(applied.state == .applied && applied.decidedBy == .recoveryKey)
            let kept = try #require(try await owner.grantee.client.identityRotations(of: owner.userID).last)
            #expect(kept.hasValidRecoverySignature(by: words.publicKey))

            let rotated = owner.iPad.withKeys(newKeys)
            #expect(try await rotated.rewrapHeldKeys(from: owner.iPad.keys).rewrapped == 1)
            #expect(try await rotated.readRecords(owner.emma) == owner.records)
            #expect(try await owner.grantee.readRecords(owner.emma) == owner.records)
            #expect(try await owner.grantee.verifiedHistory(owner.emma).ownerIdentityKey == Data(newKeys.identityKey.publicKey.rawRepresentation))
        }
    }

    /// Emma's history names the recovery key of her creation; the owner replaced it since, and
    /// rotates with the new words. Verifiers take the rekey only an hour on, so the client moves
    /// nothing before then — the old keys still open every copy meanwhile — and everything after.
    @Test func aRecoveryKeyEmmasHistoryDoesNotNameWaitsForTheHour() async throws {
        try await GrantServiceHarness.with { service in
            let owner = try await GovernedOperationTests.owner(on: service)
            let oldWords = try TestRecovery.key(for: owner.userID)
            let newWords = try RecoveryKey.generate()
            let change = try await owner.iPad.setRecoveryKey(newWords)
            #expect(try await oldWords.approve(change, through: owner.iPad.client).operation?.state == .applied)

            let newKeys = UserKeys.generate(userID: owner.userID)
            let applied = try await owner.iPad.rotateIdentityAtOnce(to: newKeys, currentGeneration: 1, recoveryKey: newWords)
            #expect(applied.state == .applied)
            var rotated = owner.iPad.withKeys(newKeys)
            do {
                try await rotated.rewrapHeldKeys(from: owner.iPad.keys)
                Issue.record("moved Emma to a rekey her history's recovery key did not approve")
            } catch let error as AgentError {
                #expect(error.code == .rotationNotDue && error.message.contains("follow the new keys only from"), "\(error)")
            }
            #expect(try await owner.iPad.readRecords(owner.emma) == owner.records)
            #expect(try await owner.iPad.client.keyStatements(owner.emma, after: 0).statements.map(\.statement.kind) == [.create, .grant])

            rotated.clock = { Date().addingTimeInterval(KeyStatement.minimumDelay + 60) }
            #expect(try await rotated.rewrapHeldKeys(from: owner.iPad.keys).rewrapped == 1)
            #expect(try await rotated.readRecords(owner.emma) == owner.records)
        }
    }
}
