import Foundation
import Testing

@testable import RescindCrypto

@Suite("FMK wrapping and verification codes")
struct FMKWrappingTests {
    let granter = X25519.PrivateKey()
    let grantee = X25519.PrivateKey()
    let member = UUID()

    func grant(_ fmk: SecretKey, version: UInt32) throws -> [UInt8] {
        try FMKWrapping.wrap(
            fmk,
            familyMemberID: member,
            version: version,
            granter: granter,
            grantee: grantee.publicKey
        )
    }

    func unwrap(
        _ wrapped: [UInt8],
        member: UUID? = nil,
        version: UInt32,
        grantee: X25519.PrivateKey? = nil,
        granter: X25519.PublicKey? = nil
    ) throws -> SecretKey {
        try FMKWrapping.unwrap(
            wrapped,
            familyMemberID: member ?? self.member,
            version: version,
            grantee: grantee ?? self.grantee,
            granter: granter ?? self.granter.publicKey
        )
    }

    @Test func grantRoundTripsBetweenTwoIdentities() throws {
        let fmk = SecretKey()
        let wrapped = try grant(fmk, version: 1)
        #expect(wrapped.count == FMKWrapping.wrappedByteCount)
        #expect(try unwrap(wrapped, version: 1) == fmk)
        let granterCode = try granter.verificationCode(with: grantee.publicKey)
        #expect(try grantee.verificationCode(with: granter.publicKey) == granterCode)
    }

    @Test func grantUnwrapFailsForAnyOtherBinding() throws {
        let wrapped = try grant(SecretKey(), version: 2)
        expectCryptoError(.unwrapFailed) { try unwrap(wrapped, member: UUID(), version: 2) }
        expectCryptoError(.unwrapFailed) { try unwrap(wrapped, version: 3) }
        expectCryptoError(.unwrapFailed) { try unwrap(wrapped, version: 2, grantee: X25519.PrivateKey()) }
        expectCryptoError(.unwrapFailed) { try unwrap(wrapped, version: 2, granter: X25519.PrivateKey().publicKey) }
        expectCryptoError(.unwrapFailed) { try unwrap(flippingBit(wrapped, at: 17), version: 2) }
        expectCryptoError(.invalidInput) { try unwrap(Array(wrapped.prefix(32)), version: 2) }
    }

    @Test func ownerCopyRoundTripsAndIsBound() throws {
        let master = SecretKey()
        let fmk = SecretKey()
        let wrapped = try FMKWrapping.wrapForOwner(fmk, familyMemberID: member, version: 5, masterKey: master)
        func unwrapOwner(member: UUID, version: UInt32, masterKey: SecretKey) throws -> SecretKey {
            try FMKWrapping.unwrapForOwner(wrapped, familyMemberID: member, version: version, masterKey: masterKey)
        }
        #expect(try unwrapOwner(member: member, version: 5, masterKey: master) == fmk)
        expectCryptoError(.unwrapFailed) { try unwrapOwner(member: member, version: 5, masterKey: SecretKey()) }
        expectCryptoError(.unwrapFailed) { try unwrapOwner(member: member, version: 4, masterKey: master) }
        expectCryptoError(.unwrapFailed) { try unwrapOwner(member: UUID(), version: 5, masterKey: master) }
    }

    /// Cross-computed with Python `cryptography` (X25519, HKDF, aes_key_wrap) on the RFC 7748
    /// section 6.1 key pairs, FMK 0x20...0x3f, master key 0x40...0x5f, version 2.
    @Test func schemeMatchesAnIndependentImplementation() throws {
        var aliceScalar = hex("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a")
        var bobScalar = hex("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb")
        let alice = try X25519.PrivateKey(rawRepresentation: &aliceScalar)
        let bob = try X25519.PrivateKey(rawRepresentation: &bobScalar)
        let member = try #require(UUID(uuidString: "3F2504E0-4F89-41D3-9A0C-0305E82C3301"))
        #expect(
            FMKWrapping.grantInfo(familyMemberID: member, version: 2) == "FMK-3f2504e0-4f89-41d3-9a0c-0305e82c3301-v2"
        )
        let fmk = try secretKey(Array(0x20...0x3f))
        let grant = try FMKWrapping.wrap(
            fmk,
            familyMemberID: member,
            version: 2,
            granter: alice,
            grantee: bob.publicKey
        )
        #expect(grant == hex("45b84e3eb439c47001d763d061a99da3e7ea21632924250baeaa82042aca18e87dc51434e5388238"))
        let unwrapped = try FMKWrapping.unwrap(
            grant,
            familyMemberID: member,
            version: 2,
            grantee: bob,
            granter: alice.publicKey
        )
        #expect(unwrapped == fmk)
        let master = try secretKey(Array(0x40...0x5f))
        let owner = try FMKWrapping.wrapForOwner(fmk, familyMemberID: member, version: 2, masterKey: master)
        #expect(owner == hex("5f6cc377a6db2c7df41264b97d9edafc0afad0719a37b924009efe6d24acf089b8ca8c7bf69b6850"))
        // SHA-256 of the RFC 7748 shared secret starts de ad 45.
        #expect(try alice.verificationCode(with: bob.publicKey) == "DE-AD-45")
        #expect(try bob.verificationCode(with: alice.publicKey) == "DE-AD-45")
    }

    @Test func verificationCodeFormat() throws {
        let code = try granter.verificationCode(with: grantee.publicKey)
        let pairs = code.split(separator: "-", omittingEmptySubsequences: false)
        #expect(pairs.count == 3)
        #expect(pairs.allSatisfy { $0.count == 2 && $0.allSatisfy { "0123456789ABCDEF".contains($0) } })
    }
}
