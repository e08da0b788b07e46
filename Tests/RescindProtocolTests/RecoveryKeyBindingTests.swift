import Foundation
import RescindCrypto
import RescindProtocol
import Testing

/// The identity key's binding of a recovery key: its exact signing input, and a signature that
/// holds for that user and those two keys only.
struct RecoveryKeyBindingTests {
    // RFC 8032 section 7.1, TEST 1 and TEST 2: the key pairs, so the input below is reproducible.
    static let identitySeed = hex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
    static let recoveryPublicKey = Data(hex("3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c"))
    static let userID = UUID(uuidString: "00000000-0000-4000-8000-000000000001")!

    @Test func theSigningInputIsTheLabelAndTheCanonicalJSONOfTheUserAndBothKeys() throws {
        var seed = Self.identitySeed
        let identity = try Ed25519.PrivateKey(seed: &seed)
        #expect(Data(identity.publicKey.rawRepresentation).map { String(format: "%02x", $0) }.joined()
            == "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
        let input = try RecoveryKeyBinding.signingInput(
            userID: Self.userID, identityPublicKey: Data(identity.publicKey.rawRepresentation), recoveryPublicKey: Self.recoveryPublicKey)
        #expect(String(decoding: input, as: UTF8.self) == """
            rescind.recovery_key_binding.v1
            {"identity_public_key":"11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=",\
            "recovery_public_key":"PUAXw+hDiVqStwqnTRt+vJyYLM8uxJaMwM1V8Sr0Zgw=",\
            "user_id":"00000000-0000-4000-8000-000000000001"}
            """)
    }

    @Test func itVerifiesForThatUserAndThoseKeysOnly() throws {
        var seed = Self.identitySeed
        let identity = try Ed25519.PrivateKey(seed: &seed)
        let identityPublicKey = Data(identity.publicKey.rawRepresentation)
        let binding = try RecoveryKeyBinding.sign(userID: Self.userID, identityKey: identity, recoveryPublicKey: Self.recoveryPublicKey)
        #expect(RecoveryKeyBinding.isValid(binding, userID: Self.userID, identityPublicKey: identityPublicKey, recoveryPublicKey: Self.recoveryPublicKey))

        let otherKey = Data(Ed25519.PrivateKey().publicKey.rawRepresentation)
        #expect(!RecoveryKeyBinding.isValid(binding, userID: UUID(), identityPublicKey: identityPublicKey, recoveryPublicKey: Self.recoveryPublicKey))
        #expect(!RecoveryKeyBinding.isValid(binding, userID: Self.userID, identityPublicKey: otherKey, recoveryPublicKey: Self.recoveryPublicKey))
        #expect(!RecoveryKeyBinding.isValid(binding, userID: Self.userID, identityPublicKey: identityPublicKey, recoveryPublicKey: otherKey))
        var tampered = binding
        tampered[7] ^= 1
        #expect(!RecoveryKeyBinding.isValid(tampered, userID: Self.userID, identityPublicKey: identityPublicKey, recoveryPublicKey: Self.recoveryPublicKey))
        #expect(!RecoveryKeyBinding.isValid(binding.prefix(63), userID: Self.userID, identityPublicKey: identityPublicKey, recoveryPublicKey: Self.recoveryPublicKey))
        #expect(!RecoveryKeyBinding.isValid(binding, userID: Self.userID, identityPublicKey: identityPublicKey.prefix(31), recoveryPublicKey: Self.recoveryPublicKey))
    }
}

private func hex(_ string: String) -> [UInt8] {
    stride(from: 0, to: string.count, by: 2).map {
        let start = string.index(string.startIndex, offsetBy: $0)
        return UInt8(string[start..<string.index(start, offsetBy: 2)], radix: 16)!
    }
}
