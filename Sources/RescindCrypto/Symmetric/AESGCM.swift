/// AES-256-GCM authenticated encryption of records (OpenSSL EVP, hardware AES where present).
///
/// The static functions are for occasional use: each call sets up the key schedule afresh. For
/// many records under one key use an `AESGCMCipher`; for re-keying use `AESGCMResealer` or the
/// batch `reseal` functions.
public enum AESGCM {
    /// 96-bit nonces: GCM's native size, no GHASH-derived IV.
    public static let nonceByteCount = 12
    /// Full 128-bit tags; truncated tags are never produced or accepted.
    public static let tagByteCount = 16
    /// Bytes a sealed box adds to its plaintext (nonce + tag).
    public static let overheadByteCount = nonceByteCount + tagByteCount
    /// Largest plaintext one call accepts (OpenSSL's EVP length is a C `int`).
    public static let maximumMessageByteCount = Int(Int32.max)

    /// Encrypts `plaintext` under `key` with a fresh random nonce, authenticating
    /// `associatedData` (use `RecordAssociatedData` for records).
    /// - Throws: `CryptoError.invalidInput` if the plaintext is too large,
    ///   `randomGenerationFailed` or `libraryFailure` from OpenSSL.
    public static func seal(
        _ plaintext: [UInt8],
        using key: SecretKey,
        authenticating associatedData: [UInt8] = []
    ) throws -> SealedBox {
        try AESGCMCipher(key: key, noncesPerRefill: 1).seal(plaintext, authenticating: associatedData)
    }

    /// Decrypts and verifies `box`; returns the plaintext only if the tag verifies.
    /// - Throws: `CryptoError.authenticationFailed` for a wrong key, wrong associated data or
    ///   any modified byte. No plaintext is ever returned on failure.
    public static func open(
        _ box: SealedBox,
        using key: SecretKey,
        authenticating associatedData: [UInt8] = []
    ) throws -> [UInt8] {
        try AESGCMCipher(key: key, noncesPerRefill: 1).open(box, authenticating: associatedData)
    }
}
