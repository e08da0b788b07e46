extension AESGCM {
    /// An AES-256-GCM result: nonce, ciphertext and 16-byte tag.
    ///
    /// Stored as one buffer in the wire layout `nonce (12) ‖ ciphertext ‖ tag (16)` (the same
    /// layout as CryptoKit's `combined`), so sealing costs one allocation and the wire form
    /// needs no copy. Use the separate accessors when a schema keeps the parts in columns.
    public struct SealedBox: Sendable, Hashable {
        /// `nonce ‖ ciphertext ‖ tag`.
        public let combined: [UInt8]

        /// Parses the wire form.
        /// - Throws: `CryptoError.invalidInput` if shorter than nonce + tag (28 bytes).
        public init(combined: [UInt8]) throws {
            guard combined.count >= AESGCM.overheadByteCount,
                combined.count - AESGCM.overheadByteCount <= AESGCM.maximumMessageByteCount
            else {
                throw CryptoError(.invalidInput)
            }
            self.combined = combined
        }

        /// Reassembles a box stored as separate parts.
        /// - Throws: `CryptoError.invalidInput` unless the nonce has 12 and the tag 16 bytes.
        public init(nonce: [UInt8], ciphertext: [UInt8], tag: [UInt8]) throws {
            guard nonce.count == AESGCM.nonceByteCount, tag.count == AESGCM.tagByteCount else {
                throw CryptoError(.invalidInput)
            }
            try self.init(combined: nonce + ciphertext + tag)
        }

        init(validatedCombined combined: [UInt8]) {
            self.combined = combined
        }

        /// The 12-byte nonce (a copy).
        public var nonce: [UInt8] { Array(combined[..<AESGCM.nonceByteCount]) }

        /// The ciphertext, same length as the plaintext (a copy).
        public var ciphertext: [UInt8] {
            Array(combined[AESGCM.nonceByteCount..<(combined.count - AESGCM.tagByteCount)])
        }

        /// The 16-byte authentication tag (a copy).
        public var tag: [UInt8] { Array(combined[(combined.count - AESGCM.tagByteCount)...]) }

        var ciphertextByteCount: Int { combined.count - AESGCM.overheadByteCount }
    }
}
