import CSodium

/// Ed25519 (RFC 8032) signatures: users' and devices' signing keys for Kafka envelopes and
/// acknowledgements.
public enum Ed25519 {
    public static let publicKeyByteCount = 32
    public static let seedByteCount = 32
    public static let signatureByteCount = 64

    /// An Ed25519 public key. Public data: `Hashable`, printable, freely copied.
    public struct PublicKey: Sendable, Hashable, CustomStringConvertible {
        /// The 32-byte RFC 8032 encoding.
        public let rawRepresentation: [UInt8]

        /// - Throws: `CryptoError.invalidKeyLength` unless 32 bytes.
        public init(rawRepresentation: [UInt8]) throws {
            guard rawRepresentation.count == publicKeyByteCount else {
                throw CryptoError(.invalidKeyLength)
            }
            self.rawRepresentation = rawRepresentation
        }

        init(unchecked rawRepresentation: [UInt8]) {
            self.rawRepresentation = rawRepresentation
        }

        /// Whether `signature` is a valid detached signature of `message` by this key.
        /// Any malformed signature (wrong length, non-canonical, small-order key) is `false`.
        public func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
            guard signature.count == signatureByteCount else { return false }
            Sodium.ensureInitialized()
            return crypto_sign_verify_detached(
                signature,
                message,
                UInt64(message.count),
                rawRepresentation
            ) == 0
        }

        public var description: String {
            "Ed25519.PublicKey(" + rawRepresentation.map { hexByte($0) }.joined() + ")"
        }
    }
}
