/// The one error type of RescindCrypto.
///
/// Every failure is fail-closed: no function that throws has produced partial plaintext or
/// key material, and any buffer it wrote was zeroed before the throw. `description` names the
/// failure and the underlying library code only; it never contains key bytes, plaintext,
/// passphrases or associated data.
public struct CryptoError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A stable, machine-readable failure code. `rawValue` is part of the API: log it, map it
    /// to HTTP or ack errors, match on it; it will not be renamed.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// AES-GCM tag or sealed-box MAC did not verify: wrong key, wrong associated data, or
        /// tampered nonce/ciphertext/tag.
        public static let authenticationFailed = Code(rawValue: "authentication_failed")
        /// A key, seed or key-shaped input has the wrong number of bytes.
        public static let invalidKeyLength = Code(rawValue: "invalid_key_length")
        /// Malformed or out-of-range input (truncated wire form, oversize buffer, bad parameters).
        public static let invalidInput = Code(rawValue: "invalid_input")
        /// AES key unwrap integrity check failed: wrong KEK, wrong binding (family member,
        /// version) or tampered wrapped key.
        public static let unwrapFailed = Code(rawValue: "unwrap_failed")
        /// An X25519 public key of small order, or a key agreement that produced all zeros.
        public static let weakPublicKey = Code(rawValue: "weak_public_key")
        /// Stored key-derivation parameters name an algorithm or limits this build refuses.
        public static let unsupportedParameters = Code(rawValue: "unsupported_parameters")
        /// Argon2id could not run (usually: the memory limit could not be allocated).
        public static let keyDerivationFailed = Code(rawValue: "key_derivation_failed")
        /// The random generator failed; nothing was encrypted.
        public static let randomGenerationFailed = Code(rawValue: "random_generation_failed")
        /// libcrypto or libsodium failed for a reason other than the above (missing provider,
        /// allocation failure); `openSSLErrorCode` carries the detail when OpenSSL reported one.
        public static let libraryFailure = Code(rawValue: "library_failure")
    }

    /// What failed.
    public let code: Code
    /// The packed OpenSSL error code (`ERR_get_error`) when OpenSSL reported one.
    public let openSSLErrorCode: UInt?
    /// For batch operations: the position of the first failing item in the input.
    public let itemIndex: Int?

    public init(_ code: Code, openSSLErrorCode: UInt? = nil, itemIndex: Int? = nil) {
        self.code = code
        self.openSSLErrorCode = openSSLErrorCode
        self.itemIndex = itemIndex
    }

    /// The same error, attributed to position `index` of a batch.
    func at(index: Int) -> CryptoError {
        CryptoError(code, openSSLErrorCode: openSSLErrorCode, itemIndex: index)
    }

    public var description: String {
        var text = "CryptoError(\(code.rawValue)"
        if let openSSLErrorCode {
            text += ", openssl=0x" + String(openSSLErrorCode, radix: 16)
        }
        if let itemIndex {
            text += ", item=\(itemIndex)"
        }
        return text + ")"
    }
}
