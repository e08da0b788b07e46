import Testing

@testable import RescindCrypto

@Suite("Ed25519 (RFC 8032)")
struct Ed25519Tests {
    struct Vector: Sendable, CustomTestStringConvertible {
        let name: String
        let seed: String
        let publicKey: String
        let message: [UInt8]
        let signature: String
        var testDescription: String { name }
    }

    /// RFC 8032 section 7.1: TEST 1, 2, 3 and TEST SHA(abc) (message = SHA-512("abc")).
    static let vectors = [
        Vector(
            name: "TEST 1",
            seed: "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
            publicKey: "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
            message: [],
            signature: """
                e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155
                5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b
                """
        ),
        Vector(
            name: "TEST 2",
            seed: "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
            publicKey: "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c",
            message: hex("72"),
            signature: """
                92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da
                085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00
                """
        ),
        Vector(
            name: "TEST 3",
            seed: "c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
            publicKey: "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025",
            message: hex("af82"),
            signature: """
                6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac
                18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a
                """
        ),
        Vector(
            name: "TEST SHA(abc)",
            seed: "833fe62409237b9d62ec77587520911e9a759cec1d19755b7da901b96dca3d42",
            publicKey: "ec172b93ad5e563bf4932c70e1245034c35467ef2efd4d64ebf819683467e2bf",
            message: hex(
                """
                ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a
                2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f
                """
            ),
            signature: """
                dc2a4459e7369633a52b1bf277839a00201009a3efbf3ecb69bea2186c26b589
                09351fc9ac90b3ecfdfbc7c66431e0303dca179c138ac17ad9bef1177331a704
                """
        ),
    ]

    @Test("RFC 8032 known answers", arguments: vectors)
    func knownAnswer(vector: Vector) throws {
        var seed = hex(vector.seed)
        let key = try Ed25519.PrivateKey(seed: &seed)
        #expect(seed.isEmpty)
        #expect(key.publicKey.rawRepresentation == hex(vector.publicKey))
        let signature = key.signature(for: vector.message)
        #expect(signature == hex(vector.signature))
        let publicKey = try Ed25519.PublicKey(rawRepresentation: hex(vector.publicKey))
        #expect(publicKey.isValidSignature(signature, for: vector.message))
    }

    @Test func verificationFailsOnAnyFlippedBit() throws {
        let key = Ed25519.PrivateKey()
        let message = Array("device ack 42".utf8)
        let signature = key.signature(for: message)
        #expect(key.publicKey.isValidSignature(signature, for: message))
        #expect(!key.publicKey.isValidSignature(signature, for: flippingBit(message, at: 3)))
        #expect(!key.publicKey.isValidSignature(flippingBit(signature, at: 0), for: message))
        #expect(!key.publicKey.isValidSignature(flippingBit(signature, at: 63, bit: 3), for: message))
        #expect(!key.publicKey.isValidSignature(Array(signature.dropLast()), for: message))
        #expect(!Ed25519.PrivateKey().publicKey.isValidSignature(signature, for: message))
    }

    @Test func privateKeyRoundTripsThroughTheKeystoreWrap() throws {
        let key = Ed25519.PrivateKey()
        let kek = SecretKey()
        let restored = try Ed25519.PrivateKey(unwrapping: key.wrapped(using: kek), using: kek)
        #expect(restored.publicKey == key.publicKey)
        #expect(restored.signature(for: [1, 2, 3]) == key.signature(for: [1, 2, 3]))
    }

    @Test func rejectsWrongLengths() {
        var shortSeed = [UInt8](repeating: 1, count: 31)
        expectCryptoError(.invalidKeyLength) { try Ed25519.PrivateKey(seed: &shortSeed) }
        #expect(shortSeed.count == 31)
        expectCryptoError(.invalidKeyLength) { try Ed25519.PublicKey(rawRepresentation: [1, 2]) }
    }
}
