extension Ed25519.PrivateKey {
    /// The seed wrapped (AES-256 key wrap, 40 bytes) under `kek`, for a keystore at rest.
    public func wrapped(using kek: SecretKey) throws -> [UInt8] {
        try withSeed { seed in
            try kek.withUnsafeBytes { kek in try AESKeyWrap.wrap(keyData: seed, kek: kek) }
        }
    }

    /// Restores a key from `wrapped(using:)` output.
    /// - Throws: `CryptoError.invalidInput` (not 40 bytes), `CryptoError.unwrapFailed` (wrong
    ///   KEK or tampered).
    public init(unwrapping wrapped: [UInt8], using kek: SecretKey) throws {
        guard wrapped.count == AESKeyWrap.wrappedKeyByteCount else {
            throw CryptoError(.invalidInput)
        }
        self.init(guardedSeed: try kek.withUnsafeBytes { try AESKeyWrap.unwrap(wrapped, kek: $0) })
    }
}
