import CSodium

/// X25519 (RFC 7748) identity keys for key agreement: FMK grants and anonymous sealed boxes.
public enum X25519 {
    public static let keyByteCount = 32

    /// An X25519 public key. Public data: `Hashable`, printable, freely copied.
    ///
    /// Small-order points are refused on construction, so a stored public key can never force
    /// a predictable (all-zero) shared secret.
    public struct PublicKey: Sendable, Hashable, CustomStringConvertible {
        /// The 32-byte little-endian u-coordinate (RFC 7748 encoding).
        public let rawRepresentation: [UInt8]

        /// - Throws: `CryptoError.invalidKeyLength` unless 32 bytes,
        ///   `CryptoError.weakPublicKey` for a small-order point (e.g. all zeros).
        public init(rawRepresentation: [UInt8]) throws {
            guard rawRepresentation.count == keyByteCount else {
                throw CryptoError(.invalidKeyLength)
            }
            guard !Self.hasSmallOrder(rawRepresentation) else {
                throw CryptoError(.weakPublicKey)
            }
            self.rawRepresentation = rawRepresentation
        }

        /// Skips the small-order check: for keys computed here from a private key, and for
        /// tests that must reach the key-agreement check behind it.
        init(unchecked rawRepresentation: [UInt8]) {
            self.rawRepresentation = rawRepresentation
        }

        public var description: String {
            "X25519.PublicKey(" + rawRepresentation.map { hexByte($0) }.joined() + ")"
        }

        /// A clamped scalar is a multiple of the cofactor 8, so multiplying any point of small
        /// order by it yields the identity, which libsodium reports as failure. The scalar is
        /// a public constant: this check handles no secret.
        private static func hasSmallOrder(_ point: [UInt8]) -> Bool {
            Sodium.ensureInitialized()
            var probe = [UInt8](repeating: 0x5a, count: keyByteCount)
            let scalar = [UInt8](repeating: 0x11, count: keyByteCount)
            return crypto_scalarmult(&probe, scalar, point) != 0
        }
    }
}
