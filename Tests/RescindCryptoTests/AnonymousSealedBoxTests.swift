import Testing

@testable import RescindCrypto

@Suite("Anonymous sealed boxes")
struct AnonymousSealedBoxTests {
    @Test func roundTrip() throws {
        let owner = X25519.PrivateKey()
        let details = Array(#"{"revoked_user_id":"…"}"#.utf8)
        let sealed = try AnonymousSealedBox.seal(details, to: owner.publicKey)
        #expect(sealed.count == details.count + AnonymousSealedBox.overheadByteCount)
        #expect(try AnonymousSealedBox.open(sealed, using: owner) == details)
        #expect(try AnonymousSealedBox.open(AnonymousSealedBox.seal([], to: owner.publicKey), using: owner) == [])
    }

    @Test func failsClosed() throws {
        let owner = X25519.PrivateKey()
        let sealed = try AnonymousSealedBox.seal(Array(repeating: 9, count: 40), to: owner.publicKey)
        expectCryptoError(.authenticationFailed) { try AnonymousSealedBox.open(sealed, using: X25519.PrivateKey()) }
        for index in [0, 40, sealed.count - 1] {
            expectCryptoError(.authenticationFailed) {
                try AnonymousSealedBox.open(flippingBit(sealed, at: index), using: owner)
            }
        }
        expectCryptoError(.authenticationFailed) { try AnonymousSealedBox.open(Array(sealed.dropLast()), using: owner) }
        expectCryptoError(.invalidInput) { try AnonymousSealedBox.open(Array(sealed.prefix(47)), using: owner) }
    }
}
