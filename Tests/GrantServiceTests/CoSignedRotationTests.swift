import Foundation
import RescindCrypto
import RescindProtocol
import RescindTestSupport
import Testing

@testable import GrantService
@testable import RescindClient

/// Two of a user's devices, each certified by the recovery key (`DeviceCertificate`), agreeing to
/// an identity rotation with their own keys (`DeviceApproval`): every verifier can tell that was
/// two devices, so the rotation takes effect at once, and the family members the user owns follow
/// it at once — as with the recovery words, and unlike one device's word, which every device (and
/// a thief's copy of one) can give with the identity key.
@Suite(.serialized) struct CoSignedRotationTests {
    /// Adult A certifies the iPad with the recovery words (the phone was certified when the
    /// identity was made), begins a rotation on the phone and approves it on the iPad: applied
    /// at once; Emma moves to the new key, and every reader, a first-time one too, takes that now.
    @Test func theOwnersTwoCertifiedDevicesRotateAtOnceForEveryVerifier() async throws {
        try await GrantServiceHarness.with { service in
            let owner = try await GovernedOperationTests.owner(on: service)
            let words = try TestRecovery.key(for: owner.userID)
            try await owner.iPad.certifyThisDevice(with: words)
            #expect(try await owner.iPad.client.me().device.certificate?.isValid(recoveryKey: words.publicKey, userID: owner.userID) == true)

            let newKeys = UserKeys.generate(userID: owner.userID)
            let begun = try await owner.phone.registerRotation(to: newKeys, currentGeneration: 1)
            #expect(begun.state == .pending && begun.rotation?.deviceApprovals?.count == 1)
            let applied = try await owner.iPad.approve(begun.operationID)
            #expect(applied.state == .applied && applied.decidedBy == .device && applied.decidedByDevice == owner.iPad.deviceID)
            let kept = try #require(try await owner.grantee.client.identityRotations(of: owner.userID).last)
            #expect(kept.isCoSigned(by: words.publicKey) && !kept.hasValidRecoverySignature(by: words.publicKey))

            let rotated = owner.phone.withKeys(newKeys)
            #expect(try await rotated.rewrapHeldKeys(from: owner.phone.keys).rewrapped == 1)
            #expect(try await rotated.readRecords(owner.emma) == owner.records)
            #expect(try await owner.grantee.readRecords(owner.emma) == owner.records)
            let newKey = Data(newKeys.identityKey.publicKey.rawRepresentation)
            #expect(try await owner.grantee.verifiedHistory(owner.emma).ownerIdentityKey == newKey)
            let newLaptop = try await owner.grantee.addDevice(name: "Adult B's laptop")
            #expect(try await newLaptop.verifiedHistory(owner.emma).ownerIdentityKey == newKey)
        }
    }

    /// A new recovery key voids every certificate the old one made (the service drops them, and
    /// refuses the old words' new ones). The new words certify both devices again, and their
    /// co-signed rotation takes effect at once; but Emma's history names the old words, so every
    /// verifier holds her rekey to the hour, and the client moves nothing before then.
    @Test func aNewRecoveryKeyVoidsTheOldCertificates() async throws {
        try await GrantServiceHarness.with { service in
            let owner = try await GovernedOperationTests.owner(on: service)
            let oldWords = try TestRecovery.key(for: owner.userID)
            try await owner.iPad.certifyThisDevice(with: oldWords)
            let newWords = try RecoveryKey.generate()
            #expect(try await oldWords.approve(try await owner.iPad.setRecoveryKey(newWords), through: owner.iPad.client).operation?.state == .applied)
            for device in [owner.phone, owner.iPad] { #expect(try await device.client.me().device.certificate == nil) }
            await expectFailure(422, "bad_signature") { try await owner.iPad.certifyThisDevice(with: oldWords) }
            for device in [owner.phone, owner.iPad] { try await device.certifyThisDevice(with: newWords) }

            let newKeys = UserKeys.generate(userID: owner.userID)
            let begun = try await owner.phone.registerRotation(to: newKeys, currentGeneration: 1)
            #expect(try await owner.iPad.approve(begun.operationID).state == .applied)
            var rotated = owner.phone.withKeys(newKeys)
            do {
                try await rotated.rewrapHeldKeys(from: owner.phone.keys)
                Issue.record("moved Emma to a rekey whose approvals her history's recovery key did not certify")
            } catch let error as AgentError {
                #expect(error.code == .rotationNotDue, "\(error)")
            }
            #expect(try await owner.phone.readRecords(owner.emma) == owner.records)  // the old keys open every copy meanwhile
            rotated.clock = { Date().addingTimeInterval(KeyStatement.minimumDelay + 60) }
            #expect(try await rotated.rewrapHeldKeys(from: owner.phone.keys).rewrapped == 1)
        }
    }

    /// The thief holds the owner's phone, which is certified, and acts first: it begins rotating
    /// the owner's identity to keys of its own and tries to make its one device count as two. The
    /// phone cannot approve its own operation, a device the thief enrols has no certificate and
    /// cannot get one, and a device that hands in the phone's approval as its own is refused.
    /// Then a compromised grant service applies the rotation anyway, with the phone's approval
    /// twice and one it certified with a key of its own: the shipped client moves nothing, and
    /// when the thief's own client rekeys Emma, the owner's iPad and the grantee refuse it.
    @Test func aThiefWithTheOwnersCertifiedPhoneCannotCoSignAlone() async throws {
        try await GrantServiceHarness.with { service in
            let owner = try await GovernedOperationTests.owner(on: service)
            let thief = owner.phone
            let thiefsKeys = UserKeys.generate(userID: owner.userID)
            let begun = try await thief.registerRotation(to: thiefsKeys, currentGeneration: 1)
            let rotation = try #require(begun.rotation)
            let phoneApproval = try #require(rotation.deviceApprovals?.first)
            #expect(phoneApproval.certificate.deviceID == thief.deviceID)

            await expectFailure(403, "not_a_second_device") { try await thief.approve(begun.operationID) }
            let accomplice = try await thief.addDevice(name: "the thief's laptop")
            await expectFailure(422, "bad_signature") { try await accomplice.certifyThisDevice(with: try RecoveryKey.generate()) }
            await expectFailure(403, "not_a_second_device") { try await accomplice.approve(begun.operationID) }
            // Bad input: a device handing in another's approval, or its own certified by a key that is not the user's.
            await expectFailure(422, "bad_signature") {
                try await owner.iPad.client.approveOperation(begun.operationID, deviceApproval: phoneApproval)
            }
            let input = try rotation.statement.signingInput()
            let selfMade = try DeviceCertificate(
                userID: owner.userID, deviceID: owner.iPad.deviceID, devicePublicKey: Data(owner.iPad.deviceKey.publicKey.rawRepresentation),
                recoveryKey: Ed25519.PrivateKey())
            await expectFailure(422, "bad_signature") {
                try await owner.iPad.client.approveOperation(
                    begun.operationID, deviceApproval: DeviceApproval(approving: input, certificate: selfMade, deviceKey: owner.iPad.deviceKey))
            }
            let pending = try #require(try await owner.iPad.client.governedOperations().first)
            #expect(pending.state == .pending && pending.rotation?.deviceApprovals == [phoneApproval])

            // The compromised service applies it, claiming two devices agreed.
            #expect(try await service.elapseSecurityDelay(of: owner.userID, listingWith: owner.iPad).first?.state == .applied)
            let servicesKey = Ed25519.PrivateKey()
            let servicesCertificate = try DeviceCertificate(
                userID: owner.userID, deviceID: owner.iPad.deviceID, devicePublicKey: Data(servicesKey.publicKey.rawRepresentation),
                recoveryKey: Ed25519.PrivateKey())
            let claimed = [phoneApproval, phoneApproval, DeviceApproval(approving: input, certificate: servicesCertificate, deviceKey: servicesKey)]
            try await service.withConnection { connection in
                try await connection.execute(
                    "UPDATE identity_rotations SET device_approvals = \(try CanonicalJSON.encode(claimed)) WHERE user_id = \(owner.userID)")
            }
            var thiefs = thief.withKeys(thiefsKeys)
            do {
                try await thiefs.rewrapHeldKeys(from: thief.keys)
                Issue.record("the shipped client moved Emma to a rotation one device approved")
            } catch let error as AgentError {
                #expect(error.code == .rotationNotDue, "\(error)")
            }
            thiefs.clock = { Date().addingTimeInterval(KeyStatement.minimumDelay + 60) }
            #expect(try await thiefs.rewrapHeldKeys(from: thief.keys).rewrapped == 1)
            for reader in [owner.iPad, owner.grantee] {
                await expectKeyHistoryRefused(.ungovernedChange) { _ = try await reader.currentFMK(owner.emma) }
            }
        }
    }
}
