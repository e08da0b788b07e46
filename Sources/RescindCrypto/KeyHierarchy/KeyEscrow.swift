#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A user's private keys escrowed to their recovery key, so that the recovery words alone —
/// every device lost or in a thief's hands — give back the keys that sign and open what the
/// user owns.
///
/// The recovery key's escrow key pair is X25519, derived from its 32-byte seed:
/// `escrow private = HKDF-SHA256(ikm: seed, salt: empty, info: "rescind-recovery-escrow-v1", 32 bytes)`
/// (a key of its own: the seed's Ed25519 key signs, this one only agrees).
/// An escrow is sealed with a fresh ephemeral X25519 key:
/// `kek = HKDF-SHA256(ikm: X25519(ephemeral, escrow public), salt: empty,
/// info: "rescind-key-escrow-v1-<user id>", 32 bytes)`, under which each private key is
/// AES-256-KW wrapped (40 bytes). The recovery key opens it with `X25519(escrow private,
/// ephemeral public)`. The user id in the info binds an escrow to its user: presented as
/// another user's, every key fails RFC 3394's integrity check.
public enum KeyEscrow {
    /// The recovery key's escrow key pair, from the recovery key's seed (which stays the caller's).
    public static func escrowKey(recoverySeed seed: [UInt8]) throws -> X25519.PrivateKey {
        guard seed.count == Ed25519.seedByteCount else { throw CryptoError(.invalidKeyLength) }
        let derived = try seed.withUnsafeBytes { seed in
            try HKDF.sha256(
                inputKeyMaterial: seed, info: Array("rescind-recovery-escrow-v1".utf8), outputByteCount: X25519.keyByteCount)
        }
        return X25519.PrivateKey(storage: derived)
    }

    /// The key wrapping an escrow of `userID`'s keys: on the sealing side `own` is the
    /// ephemeral key and `peer` the escrow public key; on the opening side the other way round.
    /// - Throws: `CryptoError.weakPublicKey` for a degenerate peer key.
    public static func kek(own: X25519.PrivateKey, peer: X25519.PublicKey, userID: UUID) throws -> SecretKey {
        try own.sharedSecret(with: peer).withUnsafeBytes { shared in
            try HKDF.deriveKey(from: shared, info: info(userID: userID))
        }
    }

    /// `"rescind-key-escrow-v1-<lowercase uuid>"`.
    static func info(userID: UUID) -> String {
        "rescind-key-escrow-v1-\(userID.uuidString.lowercased())"
    }
}
