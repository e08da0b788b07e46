import CSodium

extension Ed25519 {
    /// An Ed25519 signing key in guarded memory (libsodium's 64-byte form: seed ‖ public key).
    ///
    /// No accessor returns the seed: persist it with `wrapped(using:)`. `description` is
    /// redacted; not `Codable`.
    public struct PrivateKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
        let storage: GuardedBuffer
        public let publicKey: PublicKey

        /// A fresh random key pair.
        public init() {
            let seed = GuardedBuffer(randomCount: Ed25519.seedByteCount)
            self.init(guardedSeed: seed)
        }

        /// The key pair for a 32-byte RFC 8032 seed (the "secret key" of its test vectors).
        /// The seed is copied into guarded memory, then `seed` is zeroed and emptied.
        /// - Throws: `CryptoError.invalidKeyLength` unless 32 bytes (then `seed` is untouched).
        public init(seed: inout [UInt8]) throws {
            guard seed.count == Ed25519.seedByteCount else {
                throw CryptoError(.invalidKeyLength)
            }
            self.init(guardedSeed: Sodium.moveIntoGuardedMemory(&seed))
        }

        init(guardedSeed seed: GuardedBuffer) {
            precondition(seed.count == Ed25519.seedByteCount)
            var publicKey = [UInt8](repeating: 0, count: Ed25519.publicKeyByteCount)
            storage = seed.withUnsafeBytes { seed in
                GuardedBuffer(count: Int(crypto_sign_secretkeybytes())) { secretKey in
                    let result = crypto_sign_seed_keypair(
                        &publicKey,
                        secretKey.baseAddress!.assumingMemoryBound(to: UInt8.self),
                        typedBase(seed)
                    )
                    precondition(result == 0, "crypto_sign_seed_keypair failed")
                }
            }
            self.publicKey = PublicKey(unchecked: publicKey)
        }

        /// The 64-byte detached signature of `message` (deterministic, RFC 8032).
        public func signature(for message: [UInt8]) -> [UInt8] {
            storage.withUnsafeBytes { secretKey in
                [UInt8](unsafeUninitializedCapacity: Ed25519.signatureByteCount) { output, initializedCount in
                    let result = crypto_sign_detached(
                        output.baseAddress!,
                        nil,
                        message,
                        UInt64(message.count),
                        typedBase(secretKey)
                    )
                    precondition(result == 0, "crypto_sign_detached failed")
                    initializedCount = Ed25519.signatureByteCount
                }
            }
        }

        /// The seed in guarded memory (for wrapping).
        func withSeed<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
            try storage.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[..<Ed25519.seedByteCount])) }
        }

        public var description: String { "Ed25519.PrivateKey(redacted, publicKey: \(publicKey))" }
        public var debugDescription: String { description }
        public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
    }
}
