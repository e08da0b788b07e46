import Foundation
import RescindCrypto
import RescindProtocol
import RescindTestSupport
import Testing

@testable import RescindClient

/// The owner rotated their identity from the iPad after the phone was stolen; the thief, still
/// holding the phone's old keys (and, until it is retired, a live token), races the owner's
/// re-wrap with a `rekey` of its own: it names the owner's new key — the registered one, so the
/// service's checks pass — with a self copy nobody can open. A rekey must also be signed by the
/// new key, which the thief does not hold: refused, and the owner's re-wrap goes through.
@Suite(.serialized) struct RekeyRaceTests {
    @Test func theThiefCannotMoveAFamilyMemberToTheOwnersNewKeyWithAJunkCopy() async throws {
        try await GrantServiceHarness.with { service in
            let phone = try await service.user("Adult A")  // the thief's copy
            let iPad = try await phone.addDevice(name: "Adult A's iPad")
            let (emma, fmk) = try await phone.createFamilyMember()
            _ = try await phone.putRecord(emma, plaintext: Array("blood type O+".utf8), fmk: fmk, version: 1)
            let newKeys = UserKeys.generate(userID: phone.keys.userID)
            try await iPad.rotateIdentityAtOnce(to: newKeys, currentGeneration: 1)

            let verified = try await phone.verifiedKey(emma)
            let junk = Data(SecureRandom.bytes(count: 40))
            let holder = KeyStatement.Holder(
                userID: phone.keys.userID, wrapping: .self,
                agreementKeyFingerprint: KeyStatement.fingerprint(ofAgreementKey: Data(newKeys.agreementKey.publicKey.rawRepresentation)),
                wrappedFMKHash: KeyStatement.wrappedHash(junk))
            var rekey = try phone.nextStatement(
                after: verified.entry, kind: .rekey, holders: [holder],
                newOwner: KeyStatement.NewOwner(userID: phone.keys.userID, identityPublicKey: Data(newKeys.identityKey.publicKey.rawRepresentation)),
                signer: phone.keys.identityKey)
            // Without the new key's signature, and with one by a key of the thief's.
            for signature in [nil, Data(Ed25519.PrivateKey().signature(for: try rekey.statement.signingInput()))] {
                rekey.newOwnerSignature = signature
                await expectFailure(422, "invalid_key_statement") {
                    try await phone.client.replaceKey(
                        emma, ReplaceKeyRequest(fmkVersion: 1, wrapping: .self, wrappedFMK: junk, statement: rekey))
                }
            }
            // The owner's re-wrap, signed by both keys, goes through; Emma reads with the new keys.
            let rotated = iPad.withKeys(newKeys)
            #expect(try await rotated.rewrapHeldKeys(from: phone.keys).rewrapped == 1)
            #expect(try await rotated.readRecords(emma).values.map { String(decoding: $0, as: UTF8.self) } == ["blood type O+"])
            let served = try await rotated.client.keyStatements(emma, after: 1).statements
            #expect(served.map(\.statement.kind) == [.rekey] && served.allSatisfy { $0.hasValidNewOwnerSignature() })
        }
    }
}
