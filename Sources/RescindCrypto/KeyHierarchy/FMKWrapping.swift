#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Wrapping of family member keys (FMKs) for grantees and for the owner.
///
/// Grant (granter → grantee), per the key-hierarchy ADR:
/// `shared = X25519(granter private, grantee public)`,
/// `kek = HKDF-SHA256(ikm: shared, salt: empty, info: "FMK-<family member id>-v<version>", 32 bytes)`
/// (id as lowercase UUID text, version in decimal), `wrapped = AES-256-KW(kek, FMK)` (40 bytes).
/// The grantee unwraps with (grantee private, granter public), which yields the same secret.
///
/// Owner's copy: `kek = HKDF-SHA256(ikm: master key, salt: empty,
/// info: "FMK-OWNER-<family member id>-v<version>", 32 bytes)`, `wrapped = AES-256-KW(kek, FMK)`.
/// The info string binds each owner copy to its family member and version exactly as the grant
/// binding does, and its `OWNER` label keeps these keys apart from any other use of the master
/// key.
///
/// Because the binding is in the key derivation, a wrapped FMK presented under another family
/// member id or version fails RFC 3394's integrity check (`unwrapFailed`) instead of yielding
/// a key.
public enum FMKWrapping {
    /// Size of every wrapped FMK.
    public static let wrappedByteCount = AESKeyWrap.wrappedKeyByteCount

    /// Wraps `fmk` for `grantee`, by `granter`.
    /// - Throws: `CryptoError.weakPublicKey` for a degenerate grantee key.
    public static func wrap(
        _ fmk: SecretKey,
        familyMemberID: UUID,
        version: UInt32,
        granter: X25519.PrivateKey,
        grantee: X25519.PublicKey
    ) throws -> [UInt8] {
        let kek = try grantKEK(familyMemberID: familyMemberID, version: version, own: granter, peer: grantee)
        return try AESKeyWrap.wrap(fmk, using: kek)
    }

    /// Unwraps a grant on the grantee's side.
    /// - Throws: `CryptoError.unwrapFailed` for a wrong key pair, family member id or version
    ///   (or a tampered grant), `CryptoError.invalidInput` if not 40 bytes,
    ///   `CryptoError.weakPublicKey` for a degenerate granter key.
    public static func unwrap(
        _ wrapped: [UInt8],
        familyMemberID: UUID,
        version: UInt32,
        grantee: X25519.PrivateKey,
        granter: X25519.PublicKey
    ) throws -> SecretKey {
        guard wrapped.count == wrappedByteCount else {
            throw CryptoError(.invalidInput)
        }
        let kek = try grantKEK(familyMemberID: familyMemberID, version: version, own: grantee, peer: granter)
        return try AESKeyWrap.unwrap(wrapped, using: kek)
    }

    /// Wraps the owner's own copy of `fmk` under the master key.
    public static func wrapForOwner(
        _ fmk: SecretKey,
        familyMemberID: UUID,
        version: UInt32,
        masterKey: SecretKey
    ) throws -> [UInt8] {
        try AESKeyWrap.wrap(
            fmk,
            using: ownerKEK(familyMemberID: familyMemberID, version: version, masterKey: masterKey)
        )
    }

    /// Unwraps the owner's copy.
    /// - Throws: `CryptoError.unwrapFailed` for a wrong master key, family member id or
    ///   version, `CryptoError.invalidInput` if not 40 bytes.
    public static func unwrapForOwner(
        _ wrapped: [UInt8],
        familyMemberID: UUID,
        version: UInt32,
        masterKey: SecretKey
    ) throws -> SecretKey {
        guard wrapped.count == wrappedByteCount else {
            throw CryptoError(.invalidInput)
        }
        return try AESKeyWrap.unwrap(
            wrapped,
            using: ownerKEK(familyMemberID: familyMemberID, version: version, masterKey: masterKey)
        )
    }

    // MARK: Key derivation

    /// `"FMK-<lowercase uuid>-v<version>"`, the HKDF info of a grant.
    static func grantInfo(familyMemberID: UUID, version: UInt32) -> String {
        "FMK-\(familyMemberID.uuidString.lowercased())-v\(version)"
    }

    /// `"FMK-OWNER-<lowercase uuid>-v<version>"`, the HKDF info of an owner copy.
    static func ownerInfo(familyMemberID: UUID, version: UInt32) -> String {
        "FMK-OWNER-\(familyMemberID.uuidString.lowercased())-v\(version)"
    }

    private static func grantKEK(
        familyMemberID: UUID,
        version: UInt32,
        own: X25519.PrivateKey,
        peer: X25519.PublicKey
    ) throws -> SecretKey {
        try own.sharedSecret(with: peer).withUnsafeBytes { shared in
            try HKDF.deriveKey(from: shared, info: grantInfo(familyMemberID: familyMemberID, version: version))
        }
    }

    private static func ownerKEK(familyMemberID: UUID, version: UInt32, masterKey: SecretKey) throws -> SecretKey {
        try masterKey.withUnsafeBytes { master in
            try HKDF.deriveKey(from: master, info: ownerInfo(familyMemberID: familyMemberID, version: version))
        }
    }
}
