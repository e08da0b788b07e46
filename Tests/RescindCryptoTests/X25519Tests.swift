import Testing

@testable import RescindCrypto

@Suite("X25519 (RFC 7748)")
struct X25519Tests {
    static func privateKey(_ scalar: String) throws -> X25519.PrivateKey {
        var bytes = hex(scalar)
        return try X25519.PrivateKey(rawRepresentation: &bytes)
    }

    static func sharedSecret(_ scalar: [UInt8], _ u: [UInt8]) throws -> [UInt8] {
        var scalar = scalar
        let key = try X25519.PrivateKey(rawRepresentation: &scalar)
        return try key.sharedSecret(with: X25519.PublicKey(rawRepresentation: u)).withUnsafeBytes { Array($0) }
    }

    /// RFC 7748 section 5.2, the two single-call vectors.
    @Test(arguments: [
        (
            "a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4",
            "e6db6867583030db3594c1a424b15f7c726624ec26b3353b10a903a6d0ab1c4c",
            "c3da55379de9c6908e94ea4df28d084f32eccf03491c71f754b4075577a28552"
        ),
        (
            "4b66e9d4d1b4673c5ad22691957d6af5c11b6421e0ea01d42ca4169e7918ba0d",
            "e5210f12786811d3f4b7959d0538ae2c31dbe7106fc03c3efc4cd549c715a493",
            "95cbde9476e8907d7aade45cb4b873f88b595a68799fa152e6f8f7647aac7957"
        ),
    ])
    func scalarMultiplication(scalar: String, u: String, output: String) throws {
        #expect(try Self.sharedSecret(hex(scalar), hex(u)) == hex(output))
    }

    /// RFC 7748 section 5.2, the iterated vector after 1 and 1,000 iterations.
    @Test func iterated() throws {
        var k = [UInt8](repeating: 0, count: 32)
        k[0] = 9
        var u = k
        for iteration in 1...1000 {
            let result = try Self.sharedSecret(k, u)
            u = k
            k = result
            if iteration == 1 {
                #expect(k == hex("422c8e7a6227d7bca1350b3e2bb7279f7897b87bb6854b783c60e80311ae3079"))
            }
        }
        #expect(k == hex("684cf59ba83309552800ef566f2f4d3c1c3887c49360e3875f2eb94d99532c51"))
    }

    /// RFC 7748 section 6.1: Alice's and Bob's key pairs and their shared secret.
    @Test func diffieHellman() throws {
        let alice = try Self.privateKey("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a")
        let bob = try Self.privateKey("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb")
        #expect(
            alice.publicKey.rawRepresentation == hex("8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a")
        )
        #expect(
            bob.publicKey.rawRepresentation == hex("de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f")
        )
        let shared = hex("4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742")
        #expect(try alice.sharedSecret(with: bob.publicKey).withUnsafeBytes { Array($0) } == shared)
        #expect(try bob.sharedSecret(with: alice.publicKey).withUnsafeBytes { Array($0) } == shared)
    }

    @Test func weakPublicKeysAreRejected() throws {
        let zero = [UInt8](repeating: 0, count: 32)
        var one = zero
        one[0] = 1
        // p - 1 and p + 1 (u-coordinates of small-order points' encodings, per libsodium's list)
        let pMinusOne = hex("ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f")
        let pPlusOne = hex("eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f")
        for point in [zero, one, pMinusOne, pPlusOne] {
            expectCryptoError(.weakPublicKey) { try X25519.PublicKey(rawRepresentation: point) }
        }
        // The key-agreement check behind it also refuses, should a weak key get past parsing.
        expectCryptoError(.weakPublicKey) {
            try X25519.PrivateKey().sharedSecret(with: X25519.PublicKey(unchecked: zero))
        }
        expectCryptoError(.invalidKeyLength) { try X25519.PublicKey(rawRepresentation: Array(repeating: 7, count: 31)) }
    }

    @Test func privateKeyRoundTripsThroughTheKeystoreWrap() throws {
        let key = X25519.PrivateKey()
        let kek = SecretKey()
        let wrapped = try key.wrapped(using: kek)
        #expect(wrapped.count == 40)
        let restored = try X25519.PrivateKey(unwrapping: wrapped, using: kek)
        #expect(restored.publicKey == key.publicKey)
        expectCryptoError(.unwrapFailed) { try X25519.PrivateKey(unwrapping: wrapped, using: SecretKey()) }
    }

    @Test func privateKeyPrintsRedacted() throws {
        let key = try Self.privateKey("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a")
        for text in [String(describing: key), String(reflecting: key)] {
            #expect(!text.contains("77076d0a"))
            #expect(text.contains("redacted"))
        }
    }
}
