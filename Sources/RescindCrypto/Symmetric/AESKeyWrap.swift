import CLibCrypto

/// AES-256 key wrap (RFC 3394 / NIST SP 800-38F "KW"): deterministic authenticated
/// encryption of key material under a key-encryption key (KEK).
///
/// Used to persist keys at rest (the owner's FMK copy under the master key, private keys in a
/// keystore) and for the FMK grants. Wrapping a 32-byte key yields 40 bytes.
public enum AESKeyWrap {
    /// Bytes wrapping adds (RFC 3394's 64-bit integrity check value).
    public static let overheadByteCount = 8
    /// Size of a wrapped `SecretKey`.
    public static let wrappedKeyByteCount = SecretKey.byteCount + overheadByteCount

    /// Wraps `key` under `kek`.
    /// - Throws: `CryptoError.libraryFailure` if OpenSSL cannot run the cipher.
    public static func wrap(_ key: SecretKey, using kek: SecretKey) throws -> [UInt8] {
        try key.withUnsafeBytes { key in
            try kek.withUnsafeBytes { kek in try wrap(keyData: key, kek: kek) }
        }
    }

    /// Unwraps a 40-byte wrapped key under `kek`.
    /// - Throws: `CryptoError.invalidInput` if `wrapped` is not 40 bytes,
    ///   `CryptoError.unwrapFailed` if the integrity check fails (wrong KEK or tampered input).
    public static func unwrap(_ wrapped: [UInt8], using kek: SecretKey) throws -> SecretKey {
        guard wrapped.count == wrappedKeyByteCount else {
            throw CryptoError(.invalidInput)
        }
        return SecretKey(storage: try kek.withUnsafeBytes { try unwrap(wrapped, kek: $0) })
    }

    // MARK: Any RFC 3394 key-data length (internal: private-key keystore and RFC test vectors)

    /// Wraps `keyData` (a multiple of 8 bytes, at least 16) under a 32-byte KEK.
    static func wrap(keyData: UnsafeRawBufferPointer, kek: UnsafeRawBufferPointer) throws -> [UInt8] {
        guard keyData.count >= 16, keyData.count % 8 == 0, keyData.count <= 4096 else {
            throw CryptoError(.invalidInput)
        }
        let context = try EVPCipherContext(algorithm: .aes256Wrap, key: kek, encrypting: true, allowWrapMode: true)
        let count = keyData.count + overheadByteCount
        return try [UInt8](unsafeUninitializedCapacity: count) { output, initializedCount in
            try context.withContext { ctx in
                var written: Int32 = 0
                try OpenSSLError.check(
                    EVP_CipherUpdate(ctx, output.baseAddress, &written, typedBase(keyData), Int32(keyData.count)),
                    or: .libraryFailure
                )
                guard Int(written) == count else {
                    throw CryptoError(.libraryFailure)
                }
            }
            initializedCount = count
        }
    }

    /// Unwraps into guarded memory; the unwrapped bytes never exist outside it.
    static func unwrap(_ wrapped: [UInt8], kek: UnsafeRawBufferPointer) throws -> GuardedBuffer {
        guard wrapped.count >= 24, wrapped.count % 8 == 0, wrapped.count <= 4096 + overheadByteCount else {
            throw CryptoError(.invalidInput)
        }
        let context = try EVPCipherContext(algorithm: .aes256Wrap, key: kek, encrypting: false, allowWrapMode: true)
        return try GuardedBuffer(count: wrapped.count - overheadByteCount) { output in
            try context.withContext { ctx in
                var written: Int32 = 0
                let result = wrapped.withUnsafeBytes { wrapped in
                    EVP_CipherUpdate(
                        ctx,
                        output.baseAddress!.assumingMemoryBound(to: UInt8.self),
                        &written,
                        typedBase(wrapped),
                        Int32(wrapped.count)
                    )
                }
                guard result == 1, Int(written) == output.count else {
                    throw OpenSSLError.drain(as: .unwrapFailed)
                }
            }
        }
    }
}
