import CSodium

/// Master-key derivation from a passphrase with Argon2id v1.3 (libsodium `crypto_pwhash`,
/// parallelism 1).
///
/// Derivation is deliberately slow (about 0.3 s and 64 MiB with the default parameters). The
/// synchronous functions block their thread: never call them on Swift's cooperative pool
/// (inside a task or actor); use the `async` overloads there, which run on a Dispatch queue.
public enum Argon2id {
    /// Derives the 32-byte master key for `passphrase` (UTF-8 bytes) with the *stored*
    /// `parameters`, so keystores created under older defaults keep opening. Blocks.
    /// - Throws: `CryptoError.unsupportedParameters` for parameters this build refuses,
    ///   `CryptoError.invalidInput` for an over-long passphrase,
    ///   `CryptoError.keyDerivationFailed` if the memory cannot be allocated.
    public static func deriveKey(passphrase: [UInt8], parameters: Parameters) throws -> SecretKey {
        try parameters.validate()
        guard passphrase.count <= crypto_pwhash_argon2id_passwd_max() else {
            throw CryptoError(.invalidInput)
        }
        let storage = try GuardedBuffer(count: SecretKey.byteCount) { output in
            let result = passphrase.withUnsafeBytes { passphrase in
                // A non-null pointer even for an empty passphrase.
                let password =
                    passphrase.baseAddress?.assumingMemoryBound(to: CChar.self)
                    ?? UnsafeRawPointer(output.baseAddress!).assumingMemoryBound(to: CChar.self)
                return crypto_pwhash(
                    output.baseAddress!.assumingMemoryBound(to: UInt8.self),
                    UInt64(output.count),
                    password,
                    UInt64(passphrase.count),
                    parameters.salt,
                    parameters.opsLimit,
                    Int(parameters.memLimit),
                    crypto_pwhash_ALG_ARGON2ID13
                )
            }
            guard result == 0 else {
                throw CryptoError(.keyDerivationFailed)
            }
        }
        return SecretKey(storage: storage)
    }

    /// `deriveKey(passphrase:parameters:)` with the passphrase's UTF-8 bytes. Blocks.
    public static func deriveKey(passphrase: String, parameters: Parameters) throws -> SecretKey {
        try deriveKey(passphrase: Array(passphrase.utf8), parameters: parameters)
    }

    /// Derives the master key on a Dispatch queue, suspending the calling task meanwhile.
    public static func deriveKey(passphrase: [UInt8], parameters: Parameters) async throws -> SecretKey {
        try await BlockingWork.run { try deriveKey(passphrase: passphrase, parameters: parameters) }
    }

    /// Derives the master key on a Dispatch queue, suspending the calling task meanwhile.
    public static func deriveKey(passphrase: String, parameters: Parameters) async throws -> SecretKey {
        try await deriveKey(passphrase: Array(passphrase.utf8), parameters: parameters)
    }

    /// Checks `passphrase` against a PHC-encoded Argon2id string (`$argon2id$v=19$...`).
    /// Internal: the reference test vector uses an 8-byte salt that `crypto_pwhash` cannot take.
    static func verify(encoded: String, passphrase: [UInt8]) -> Bool {
        Sodium.ensureInitialized()
        return crypto_pwhash_argon2id_str_verify(encoded, passphrase, UInt64(passphrase.count)) == 0
    }
}
