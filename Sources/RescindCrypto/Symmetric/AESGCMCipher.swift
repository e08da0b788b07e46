import CLibCrypto

/// AES-256-GCM bound to one key, for sealing and opening many records.
///
/// Holds one OpenSSL context per direction with the key schedule computed once, and a buffer
/// of pre-drawn random nonces (see `NonceBuffer`), so a seal or open costs one IV reset, the
/// GCM pass, and the single allocation of its result.
///
/// Not `Sendable`: the contexts carry per-operation state. Use one cipher per thread (the
/// batch `AESGCM.reseal` gives each worker its own).
public final class AESGCMCipher {
    private let key: SecretKey
    private let nonces: NonceBuffer
    private var sealContext: EVPCipherContext?
    private var openContext: EVPCipherContext?

    /// A cipher for `key`. OpenSSL state is created on first use, so errors surface from
    /// `seal`/`open`.
    public convenience init(key: SecretKey) {
        self.init(key: key, noncesPerRefill: 64)
    }

    init(key: SecretKey, noncesPerRefill: Int) {
        self.key = key
        self.nonces = NonceBuffer(noncesPerRefill: noncesPerRefill)
    }

    /// Encrypts `plaintext` with a fresh random 96-bit nonce, authenticating `associatedData`.
    /// - Throws: `CryptoError.invalidInput` (too large), `randomGenerationFailed`,
    ///   `libraryFailure`.
    public func seal(_ plaintext: [UInt8], authenticating associatedData: [UInt8] = []) throws -> AESGCM.SealedBox {
        try plaintext.withUnsafeBytes { plaintext in
            try associatedData.withUnsafeBytes { associatedData in
                try seal(plaintext, authenticating: associatedData, fixedNonce: nil)
            }
        }
    }

    /// Decrypts and verifies `box`.
    /// - Throws: `CryptoError.authenticationFailed` unless key, nonce, ciphertext, tag and
    ///   associated data are exactly those that were sealed. Never returns partial plaintext.
    public func open(_ box: AESGCM.SealedBox, authenticating associatedData: [UInt8] = []) throws -> [UInt8] {
        let count = box.ciphertextByteCount
        return try box.combined.withUnsafeBytes { combined in
            try associatedData.withUnsafeBytes { associatedData in
                try [UInt8](unsafeUninitializedCapacity: count) { output, initializedCount in
                    try open(
                        combined: combined,
                        authenticating: associatedData,
                        into: UnsafeMutableRawBufferPointer(output)
                    )
                    initializedCount = count
                }
            }
        }
    }

    // MARK: Core (internal: the resealer and the known-answer tests use it)

    /// Seals into a new combined buffer. `fixedNonce` exists for known-answer tests only and
    /// must never be reachable from the public API: nonce reuse under GCM leaks the
    /// authentication key and the XOR of plaintexts.
    func seal(
        _ plaintext: UnsafeRawBufferPointer,
        authenticating associatedData: UnsafeRawBufferPointer,
        fixedNonce: UnsafeRawBufferPointer?
    ) throws -> AESGCM.SealedBox {
        let total = try Self.sealedByteCount(plaintext: plaintext, associatedData: associatedData)
        let combined = try [UInt8](unsafeUninitializedCapacity: total) { output, initializedCount in
            try seal(plaintext, authenticating: associatedData, fixedNonce: fixedNonce, into: UnsafeMutableRawPointer(output.baseAddress!))
            initializedCount = total
        }
        return AESGCM.SealedBox(validatedCombined: combined)
    }

    /// Seals and appends `nonce ‖ ciphertext ‖ tag` to `output`; on failure `output` is left
    /// as it was. Reusing `output` across batches makes sealing allocation-free.
    func seal(
        _ plaintext: UnsafeRawBufferPointer,
        authenticating associatedData: UnsafeRawBufferPointer,
        appendingTo output: inout [UInt8]
    ) throws {
        let total = try Self.sealedByteCount(plaintext: plaintext, associatedData: associatedData)
        let start = output.count
        // Room for nonce ‖ ciphertext ‖ tag, overwritten below. The plaintext stands in for
        // the ciphertext because appending it is a memcpy, where appending `total` zeros
        // went element by element (measured: 1.2% of the re-encryption kernel).
        output.append(contentsOf: Self.zeros.prefix(AESGCM.nonceByteCount))
        output.append(contentsOf: plaintext)
        output.append(contentsOf: Self.zeros.prefix(AESGCM.tagByteCount))
        assert(output.count == start + total)
        do {
            try output.withUnsafeMutableBytes { bytes in
                try seal(plaintext, authenticating: associatedData, fixedNonce: nil, into: bytes.baseAddress! + start)
            }
        } catch {
            // The stand-in plaintext must not stay behind in the buffer's spare capacity.
            output.withUnsafeMutableBytes { bytes in
                Sodium.zero(UnsafeMutableRawBufferPointer(rebasing: bytes[start...]))
            }
            output.removeSubrange(start...)
            throw error
        }
    }

    private static let zeros = [UInt8](repeating: 0, count: AESGCM.tagByteCount)

    private static func sealedByteCount(
        plaintext: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer
    ) throws -> Int {
        guard plaintext.count <= AESGCM.maximumMessageByteCount, associatedData.count <= Int(Int32.max) else {
            throw CryptoError(.invalidInput)
        }
        return plaintext.count + AESGCM.overheadByteCount
    }

    /// Writes `nonce ‖ ciphertext ‖ tag` (plaintext + 28 bytes) at `base`.
    private func seal(
        _ plaintext: UnsafeRawBufferPointer,
        authenticating associatedData: UnsafeRawBufferPointer,
        fixedNonce: UnsafeRawBufferPointer?,
        into base: UnsafeMutableRawPointer
    ) throws {
        let context = try sealer()
        if let fixedNonce {
            precondition(fixedNonce.count == AESGCM.nonceByteCount)
            base.copyMemory(from: fixedNonce.baseAddress!, byteCount: AESGCM.nonceByteCount)
        } else {
            try nonces.take(into: base)
        }
        let ciphertext = (base + AESGCM.nonceByteCount).assumingMemoryBound(to: UInt8.self)
        try context.withContext { ctx in
            try OpenSSLError.check(
                EVP_CipherInit_ex(ctx, nil, nil, nil, base.assumingMemoryBound(to: UInt8.self), -1),
                or: .libraryFailure
            )
            var written: Int32 = 0
            if associatedData.count > 0 {
                try OpenSSLError.check(
                    EVP_CipherUpdate(ctx, nil, &written, typedBase(associatedData), Int32(associatedData.count)),
                    or: .libraryFailure
                )
            }
            if plaintext.count > 0 {
                try OpenSSLError.check(
                    EVP_CipherUpdate(ctx, ciphertext, &written, typedBase(plaintext), Int32(plaintext.count)),
                    or: .libraryFailure
                )
            }
            try OpenSSLError.check(
                EVP_CipherFinal_ex(ctx, ciphertext + plaintext.count, &written),
                or: .libraryFailure
            )
            try OpenSSLError.check(
                EVP_CIPHER_CTX_ctrl(
                    ctx,
                    EVP_CTRL_GCM_GET_TAG,
                    Int32(AESGCM.tagByteCount),
                    UnsafeMutableRawPointer(ciphertext + plaintext.count)
                ),
                or: .libraryFailure
            )
        }
    }

    /// Opens a combined buffer into `output` (at least ciphertext-sized). On any failure the
    /// first ciphertext-length bytes of `output` are zeroed before the error is thrown.
    func open(
        combined: UnsafeRawBufferPointer,
        authenticating associatedData: UnsafeRawBufferPointer,
        into output: UnsafeMutableRawBufferPointer
    ) throws {
        guard combined.count >= AESGCM.overheadByteCount else {
            throw CryptoError(.invalidInput)
        }
        let tagStart = combined.count - AESGCM.tagByteCount
        try open(
            nonce: UnsafeRawBufferPointer(rebasing: combined[..<AESGCM.nonceByteCount]),
            ciphertext: UnsafeRawBufferPointer(rebasing: combined[AESGCM.nonceByteCount..<tagStart]),
            tag: UnsafeRawBufferPointer(rebasing: combined[tagStart...]),
            authenticating: associatedData, into: output)
    }

    /// Opens a record given as its three parts, wherever each lies, into `output` (at least
    /// ciphertext-sized). On any failure the first ciphertext-length bytes of `output` are
    /// zeroed before the error is thrown.
    /// - Throws: `CryptoError.invalidInput` unless the nonce is 12 bytes and the tag 16 (a
    ///   truncated tag is never accepted), `authenticationFailed` as `open(combined:)`.
    func open(
        nonce nonceBytes: UnsafeRawBufferPointer,
        ciphertext ciphertextBytes: UnsafeRawBufferPointer,
        tag tagBytes: UnsafeRawBufferPointer,
        authenticating associatedData: UnsafeRawBufferPointer,
        into output: UnsafeMutableRawBufferPointer
    ) throws {
        guard nonceBytes.count == AESGCM.nonceByteCount, tagBytes.count == AESGCM.tagByteCount,
            ciphertextBytes.count <= AESGCM.maximumMessageByteCount, associatedData.count <= Int(Int32.max)
        else {
            throw CryptoError(.invalidInput)
        }
        let count = ciphertextBytes.count
        precondition(output.count >= count)
        let context = try opener()
        let nonce: UnsafePointer<UInt8> = typedBase(nonceBytes)
        let tag: UnsafePointer<UInt8> = typedBase(tagBytes)
        do {
            try context.withContext { ctx in
                try OpenSSLError.check(EVP_CipherInit_ex(ctx, nil, nil, nil, nonce, -1), or: .libraryFailure)
                var written: Int32 = 0
                if associatedData.count > 0 {
                    try OpenSSLError.check(
                        EVP_CipherUpdate(ctx, nil, &written, typedBase(associatedData), Int32(associatedData.count)),
                        or: .libraryFailure
                    )
                }
                var sink: UInt8 = 0
                let plaintext = count > 0 ? output.baseAddress!.assumingMemoryBound(to: UInt8.self) : nil
                if let plaintext {
                    try OpenSSLError.check(
                        EVP_CipherUpdate(ctx, plaintext, &written, typedBase(ciphertextBytes), Int32(count)),
                        or: .libraryFailure
                    )
                }
                try OpenSSLError.check(
                    EVP_CIPHER_CTX_ctrl(
                        ctx,
                        EVP_CTRL_GCM_SET_TAG,
                        Int32(AESGCM.tagByteCount),
                        UnsafeMutableRawPointer(mutating: tag)
                    ),
                    or: .libraryFailure
                )
                // GCM's final writes no bytes; it only compares the tag.
                let verified = withUnsafeMutablePointer(to: &sink) { sink in
                    EVP_CipherFinal_ex(ctx, plaintext.map { $0 + count } ?? sink, &written)
                }
                guard verified == 1 else {
                    throw OpenSSLError.drain(as: .authenticationFailed)
                }
            }
        } catch {
            Sodium.zero(UnsafeMutableRawBufferPointer(rebasing: output[..<count]))
            throw error
        }
    }

    private func sealer() throws -> EVPCipherContext {
        if let sealContext { return sealContext }
        let context = try key.withUnsafeBytes {
            try EVPCipherContext(algorithm: .aes256GCM, key: $0, encrypting: true)
        }
        sealContext = context
        return context
    }

    private func opener() throws -> EVPCipherContext {
        if let openContext { return openContext }
        let context = try key.withUnsafeBytes {
            try EVPCipherContext(algorithm: .aes256GCM, key: $0, encrypting: false)
        }
        openContext = context
        return context
    }
}

@available(*, unavailable, message: "AESGCMCipher holds OpenSSL state: use one per thread")
extension AESGCMCipher: Sendable {}
