import CLibCrypto

/// HKDF-SHA256 (RFC 5869) through OpenSSL's EVP_KDF. Internal: the module uses it to turn ECDH
/// secrets and the master key into purpose-bound wrapping keys.
enum HKDF {
    /// Derives `outputByteCount` bytes into guarded memory.
    /// - Parameter salt: empty means RFC 5869's default (32 zero bytes).
    /// - Throws: `CryptoError.invalidInput` for an output length outside 1...8160 (255 × 32),
    ///   `CryptoError.libraryFailure` if OpenSSL fails.
    static func sha256(
        inputKeyMaterial: UnsafeRawBufferPointer,
        salt: [UInt8] = [],
        info: [UInt8],
        outputByteCount: Int
    ) throws -> GuardedBuffer {
        guard (1...(255 * 32)).contains(outputByteCount) else {
            throw CryptoError(.invalidInput)
        }
        return try OpenSSLAlgorithm.hkdf.withHandle { kdf in
            try GuardedBuffer(count: outputByteCount) { output in
                let result = salt.withUnsafeBytes { salt in
                    info.withUnsafeBytes { info in
                        rescind_hkdf_sha256(
                            kdf,
                            typedBase(inputKeyMaterial),
                            inputKeyMaterial.count,
                            typedBase(salt),
                            salt.count,
                            typedBase(info),
                            info.count,
                            output.baseAddress!.assumingMemoryBound(to: UInt8.self),
                            output.count
                        )
                    }
                }
                try OpenSSLError.check(result, or: .libraryFailure)
            }
        }
    }

    /// A 32-byte key derived from `inputKeyMaterial` for `info`.
    static func deriveKey(from inputKeyMaterial: UnsafeRawBufferPointer, info: String) throws -> SecretKey {
        SecretKey(
            storage: try sha256(
                inputKeyMaterial: inputKeyMaterial,
                info: Array(info.utf8),
                outputByteCount: SecretKey.byteCount
            )
        )
    }
}
