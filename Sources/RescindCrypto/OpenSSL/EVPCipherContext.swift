import CLibCrypto

/// Owns one `EVP_CIPHER_CTX` initialised with a key for one direction.
///
/// The key schedule is computed once here and kept by OpenSSL; later operations re-initialise
/// only the IV (`EVP_CipherInit_ex` with a nil cipher and key), which is what makes a reused
/// context cheap. `EVP_CIPHER_CTX_free` cleanses the key schedule.
///
/// Not `Sendable`: an `EVP_CIPHER_CTX` carries per-operation state and must be used by one
/// thread at a time.
final class EVPCipherContext {
    private let context: OpaquePointer

    /// - Throws: `CryptoError.invalidKeyLength` when `key` does not fit the cipher,
    ///   `CryptoError.libraryFailure` when OpenSSL cannot set up the context.
    init(
        algorithm: OpenSSLAlgorithm,
        key: UnsafeRawBufferPointer,
        encrypting: Bool,
        allowWrapMode: Bool = false
    ) throws {
        guard let context = EVP_CIPHER_CTX_new() else {
            throw OpenSSLError.drain(as: .libraryFailure)
        }
        self.context = context
        if allowWrapMode {
            // Needed for wrap-mode ciphers on OpenSSL's legacy code path; harmless with providers.
            EVP_CIPHER_CTX_set_flags(context, Int32(EVP_CIPHER_CTX_FLAG_WRAP_ALLOW))
        }
        try algorithm.withHandle { cipher in
            guard Int(EVP_CIPHER_get_key_length(cipher)) == key.count else {
                throw CryptoError(.invalidKeyLength)
            }
            try OpenSSLError.check(
                EVP_CipherInit_ex(
                    context,
                    cipher,
                    nil,
                    key.baseAddress?.assumingMemoryBound(to: UInt8.self),
                    nil,
                    encrypting ? 1 : 0
                ),
                or: .libraryFailure
            )
        }
    }

    deinit {
        EVP_CIPHER_CTX_free(context)
    }

    /// Scoped access to the raw context; the pointer must not escape `body`.
    @inline(__always)
    func withContext<R>(_ body: (OpaquePointer) throws -> R) rethrows -> R {
        try body(context)
    }
}
