import CSodium

extension X25519 {
    /// An X25519 private key (the 32-byte scalar) in guarded memory.
    ///
    /// No accessor returns the scalar: persist it with `wrapped(using:)`. `description` is
    /// redacted; not `Codable`.
    public struct PrivateKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
        let storage: GuardedBuffer
        public let publicKey: PublicKey

        /// A fresh random key pair.
        public init() {
            self.init(storage: GuardedBuffer(randomCount: X25519.keyByteCount))
        }

        /// Imports a raw scalar (RFC 7748 test vectors); `bytes` is zeroed.
        init(rawRepresentation bytes: inout [UInt8]) throws {
            guard bytes.count == X25519.keyByteCount else {
                throw CryptoError(.invalidKeyLength)
            }
            self.init(storage: Sodium.moveIntoGuardedMemory(&bytes))
        }

        init(storage: GuardedBuffer) {
            precondition(storage.count == X25519.keyByteCount)
            self.storage = storage
            var point = [UInt8](repeating: 0, count: X25519.keyByteCount)
            let result = storage.withUnsafeBytes { scalar in
                crypto_scalarmult_base(&point, typedBase(scalar))
            }
            precondition(result == 0, "crypto_scalarmult_base failed")
            publicKey = PublicKey(unchecked: point)
        }

        /// Raw X25519 output `scalar · peer`, in guarded memory. Internal: it is never used as
        /// a key directly, only through HKDF (grants) or SHA-256 (verification codes).
        /// - Throws: `CryptoError.weakPublicKey` if `peer` has small order or the result is
        ///   all zeros.
        func sharedSecret(with peer: PublicKey) throws -> GuardedBuffer {
            try storage.withUnsafeBytes { scalar in
                try GuardedBuffer(count: X25519.keyByteCount) { output in
                    let result = crypto_scalarmult(
                        output.baseAddress!.assumingMemoryBound(to: UInt8.self),
                        typedBase(scalar),
                        peer.rawRepresentation
                    )
                    guard result == 0,
                        sodium_is_zero(output.baseAddress!.assumingMemoryBound(to: UInt8.self), output.count) == 0
                    else {
                        throw CryptoError(.weakPublicKey)
                    }
                }
            }
        }

        public var description: String { "X25519.PrivateKey(redacted, publicKey: \(publicKey))" }
        public var debugDescription: String { description }
        public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
    }
}
