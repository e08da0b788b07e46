import Foundation
import RescindCrypto
import RescindProtocol
import RescindTestSupport
import Testing

@testable import GrantService
@testable import RescindClient

/// An ownership transfer begun on one certified device of the owner and approved on another with
/// its own certified key takes effect at once, for the service and for every verifier of the
/// family member's history: as with the recovery words, unlike one device's word (every device,
/// and a thief's copy of one, holds the owner key that signs the transfer).
@Suite(.serialized) struct CoSignedTransferTests {
    /// Adult A hands Emma to Adult B from the phone and approves on the iPad, both certified: in
    /// effect at once; B, another grantee and a first-time verifier take it now, and B adopts.
    @Test func theOwnersTwoCertifiedDevicesHandEmmaOverAtOnce() async throws {
        try await GrantServiceHarness.with { service in
            let owner = try await GovernedOperationTests.owner(on: service)
            let other = try await service.user("Adult C")
            try await owner.phone.grant(owner.emma, to: other.keys.userID)
            try await owner.iPad.certifyThisDevice(with: try TestRecovery.key(for: owner.userID))

            let begun = try await owner.phone.transferOwnership(owner.emma, to: owner.grantee.keys.userID)
            #expect(begun.state == .pending && begun.transfer?.statement?.deviceApprovals?.count == 1)
            let applied = try await owner.iPad.approve(begun.operationID)
            #expect(applied.state == .applied && applied.decidedBy == .device)
            let transfer = try #require(try await other.client.keyStatements(owner.emma, after: 0).statements.last)
            #expect(transfer.statement.kind == .transfer && transfer.deviceApprovals?.count == 2 && transfer.recoverySignature == nil)

            for reader in [owner.iPad, other] { _ = try await reader.currentFMK(owner.emma) }
            #expect(try await owner.grantee.verifiedHistory(owner.emma).ownerUserID == owner.grantee.keys.userID)
            try await owner.grantee.adoptOwnership(owner.emma)
            #expect(try await owner.grantee.readRecords(owner.emma) == owner.records)
            let newLaptop = try await other.addDevice(name: "Adult C's laptop")
            #expect(try await newLaptop.verifiedHistory(owner.emma).ownerUserID == owner.grantee.keys.userID)
        }
    }

    /// The thief holds the owner's certified phone and acts first: it hands Emma to an accomplice.
    /// An uncertified second device's approval, the phone's approval passed off by the iPad, and
    /// the phone approving its own transfer are all refused, and the transfer stays pending. A
    /// compromised service then applies it, claiming the phone's approval twice and one it
    /// certified itself: every verifier refuses Emma's history, and the accomplice cannot adopt.
    @Test func aThiefWithTheOwnersCertifiedPhoneCannotHandEmmaOverAlone() async throws {
        try await GrantServiceHarness.with { service in
            let owner = try await GovernedOperationTests.owner(on: service)
            let accomplice = try await service.user("the thief's accomplice")
            try await owner.phone.grant(owner.emma, to: accomplice.keys.userID)
            let thief = owner.phone
            let begun = try await thief.transferOwnership(owner.emma, to: accomplice.keys.userID)
            let signed = try #require(begun.transfer?.statement)
            let phoneApproval = try #require(signed.deviceApprovals?.first)

            await expectFailure(403, "not_a_second_device") { try await thief.approve(begun.operationID) }
            await expectFailure(409, "recovery_key_required") { try await owner.iPad.approve(begun.operationID) }  // not certified
            await expectFailure(422, "bad_signature") {
                try await owner.iPad.client.approveOperation(begun.operationID, deviceApproval: phoneApproval)
            }
            #expect(try await owner.iPad.client.governedOperations().first?.state == .pending)

            #expect(try await service.elapseSecurityDelay(of: owner.userID, listingWith: owner.iPad).first?.state == .applied)
            let servicesKey = Ed25519.PrivateKey()
            let servicesCertificate = try DeviceCertificate(
                userID: owner.userID, deviceID: owner.iPad.deviceID, devicePublicKey: Data(servicesKey.publicKey.rawRepresentation),
                recoveryKey: Ed25519.PrivateKey())
            let claimed = [
                phoneApproval, phoneApproval,
                DeviceApproval(approving: try signed.statement.signingInput(), certificate: servicesCertificate, deviceKey: servicesKey),
            ]
            try await service.withConnection { connection in
                try await connection.execute(
                    """
                    UPDATE key_statements SET device_approvals = \(try CanonicalJSON.encode(claimed))
                    WHERE family_member_id = \(owner.emma) AND kind = 'transfer'
                    """)
            }
            for reader in [owner.iPad, owner.grantee, accomplice] {
                await expectKeyHistoryRefused(.ungovernedChange) { _ = try await reader.currentFMK(owner.emma) }
            }
            await expectKeyHistoryRefused(.ungovernedChange) { try await accomplice.adoptOwnership(owner.emma) }
        }
    }
}
