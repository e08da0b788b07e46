import CLibCrypto

/// One explicitly fetched OpenSSL algorithm (`EVP_CIPHER`, `EVP_MD` or `EVP_KDF`), fetched once
/// per process and shared.
///
/// Explicit fetching avoids OpenSSL 3's implicit per-call fetch (a locked name lookup) that
/// `EVP_aes_256_gcm()` and friends cost on every context initialisation.
///
/// `@unchecked Sendable`: fetched algorithm objects are immutable and reference-counted
/// atomically by OpenSSL; its documentation allows using one from many threads at once. The
/// Swift side only reads the pointer after init.
final class OpenSSLAlgorithm: @unchecked Sendable {
    enum Kind {
        case cipher, digest, kdf
    }

    private let kind: Kind
    private let handle: OpaquePointer?

    private init(kind: Kind, name: String) {
        self.kind = kind
        switch kind {
        case .cipher: handle = EVP_CIPHER_fetch(nil, name, nil)
        case .digest: handle = EVP_MD_fetch(nil, name, nil)
        case .kdf: handle = EVP_KDF_fetch(nil, name, nil)
        }
        if handle == nil {
            ERR_clear_error()
        }
    }

    deinit {
        switch kind {
        case .cipher: EVP_CIPHER_free(handle)
        case .digest: EVP_MD_free(handle)
        case .kdf: EVP_KDF_free(handle)
        }
    }

    /// Runs `body` with the fetched handle; throws `libraryFailure` when the provider lacks it.
    func withHandle<R>(_ body: (OpaquePointer) throws -> R) throws -> R {
        guard let handle else {
            throw CryptoError(.libraryFailure)
        }
        return try body(handle)
    }

    static let aes256GCM = OpenSSLAlgorithm(kind: .cipher, name: "AES-256-GCM")
    static let aes256Wrap = OpenSSLAlgorithm(kind: .cipher, name: "AES-256-WRAP")
    static let sha256 = OpenSSLAlgorithm(kind: .digest, name: "SHA2-256")
    static let hkdf = OpenSSLAlgorithm(kind: .kdf, name: "HKDF")
}
