import Foundation
import Testing

@testable import RescindCrypto

/// `KeyEscrow` is HKDF-SHA256 (RFC 5869) over X25519 (RFC 7748) with AES-256-KW (RFC 3394), each
/// tested against its published vectors in its own suite; these pin the composition (expected
/// values computed independently with Python's `hmac` and `cryptography`) and that it fails closed.
@Suite("Key escrow to a recovery key")
struct KeyEscrowTests {
    let userID = UUID(uuidString: "00000000-0000-0000-0000-0000000000A1")!

    @Test func theEscrowKeyIsHKDFOfTheRecoverySeed() throws {
        let key = try KeyEscrow.escrowKey(recoverySeed: Array(0..<32))
        #expect(key.publicKey.rawRepresentation == hex("552fad4896b2939a83138b12c7aa904ffe3ab6569a3ad3513525691c20087839"))
        #expect(throws: CryptoError.self) { try KeyEscrow.escrowKey(recoverySeed: Array(0..<31)) }
    }

    /// RFC 7748 section 6.1's key pairs: both sides derive the same KEK, bound to the user id.
    @Test func bothSidesDeriveTheSameKEKForOneUserOnly() throws {
        let alice = try X25519Tests.privateKey("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a")
        let bob = try X25519Tests.privateKey("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb")
        let sealing = try KeyEscrow.kek(own: alice, peer: bob.publicKey, userID: userID)
        let opening = try KeyEscrow.kek(own: bob, peer: alice.publicKey, userID: userID)
        #expect(sealing.withUnsafeBytes { Array($0) } == hex("a6da4a0282b9b2d354769a7ff89f4782e1f17599b812871de24aa60a3954d8fd"))
        #expect(sealing == opening)

        // A key wrapped for this user opens for nobody else, with no other key, and not tampered.
        let identity = Ed25519.PrivateKey()
        let wrapped = try identity.wrapped(using: sealing)
        #expect(try Ed25519.PrivateKey(unwrapping: wrapped, using: opening).publicKey == identity.publicKey)
        let otherUser = try KeyEscrow.kek(own: bob, peer: alice.publicKey, userID: UUID())
        #expect(throws: CryptoError.self) { try Ed25519.PrivateKey(unwrapping: wrapped, using: otherUser) }
        let otherRecipient = try KeyEscrow.kek(own: X25519.PrivateKey(), peer: alice.publicKey, userID: userID)
        #expect(throws: CryptoError.self) { try Ed25519.PrivateKey(unwrapping: wrapped, using: otherRecipient) }
        var tampered = wrapped
        tampered[7] ^= 1
        #expect(throws: CryptoError.self) { try Ed25519.PrivateKey(unwrapping: tampered, using: opening) }
        #expect(throws: CryptoError.self) { try Ed25519.PrivateKey(unwrapping: Array(wrapped.dropLast()), using: opening) }
    }
}
