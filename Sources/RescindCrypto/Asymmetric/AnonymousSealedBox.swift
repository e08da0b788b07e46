import CSodium

/// libsodium sealed boxes (`crypto_box_seal`): anonymous public-key encryption to an X25519
/// identity key, for data a server writes but must not read (e.g. audit details sealed to the
/// family member's owner).
///
/// Each seal uses a fresh ephemeral key pair; the sender is not authenticated (sign the
/// surrounding message with Ed25519 when the origin matters).
public enum AnonymousSealedBox {
    /// Bytes a sealed box adds: ephemeral public key (32) + MAC (16).
    public static let overheadByteCount = 48

    /// Encrypts `plaintext` so that only the holder of `recipient`'s private key can open it.
    /// - Throws: `CryptoError.libraryFailure` if libsodium refuses (it cannot for a valid key).
    public static func seal(_ plaintext: [UInt8], to recipient: X25519.PublicKey) throws -> [UInt8] {
        Sodium.ensureInitialized()
        let count = plaintext.count + overheadByteCount
        return try [UInt8](unsafeUninitializedCapacity: count) { output, initializedCount in
            guard
                crypto_box_seal(output.baseAddress!, plaintext, UInt64(plaintext.count), recipient.rawRepresentation)
                    == 0
            else {
                throw CryptoError(.libraryFailure)
            }
            initializedCount = count
        }
    }

    /// Decrypts a sealed box addressed to `recipient`.
    /// - Throws: `CryptoError.invalidInput` if shorter than 48 bytes,
    ///   `CryptoError.authenticationFailed` for another recipient or any modified byte. No
    ///   plaintext is returned on failure.
    public static func open(_ sealed: [UInt8], using recipient: X25519.PrivateKey) throws -> [UInt8] {
        guard sealed.count >= overheadByteCount else {
            throw CryptoError(.invalidInput)
        }
        let count = sealed.count - overheadByteCount
        return try recipient.storage.withUnsafeBytes { secretKey in
            try [UInt8](unsafeUninitializedCapacity: count) { output, initializedCount in
                var sink: UInt8 = 0
                let result = withUnsafeMutablePointer(to: &sink) { sink in
                    crypto_box_seal_open(
                        output.baseAddress ?? sink,
                        sealed,
                        UInt64(sealed.count),
                        recipient.publicKey.rawRepresentation,
                        typedBase(secretKey)
                    )
                }
                guard result == 0 else {
                    Sodium.zero(UnsafeMutableRawBufferPointer(output))
                    throw CryptoError(.authenticationFailed)
                }
                initializedCount = count
            }
        }
    }
}
