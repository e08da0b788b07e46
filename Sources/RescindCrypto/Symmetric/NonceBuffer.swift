import CLibCrypto

/// Hands out 96-bit AES-GCM nonces, drawn from OpenSSL's CSPRNG many at a time.
///
/// One `RAND_bytes` call fills `noncesPerRefill` nonces; each nonce is still 96 independent
/// random bits, and the cursor only moves forward, so no nonce is handed out twice. Random
/// (not counter) nonces keep sealing stateless across processes and devices that share an
/// FMK; NIST SP 800-38D bounds a key to 2^32 random-nonce seals, far above the few thousand
/// records one family member key encrypts before it is rotated.
///
/// Do not `fork()` a process while it holds a partly used buffer: parent and child would hand
/// out the same remaining nonces. (Swift servers do not fork without `exec`.)
///
/// Not `Sendable`: owned by one `AESGCMCipher`, used by one thread at a time.
final class NonceBuffer {
    private let storage: UnsafeMutableRawBufferPointer
    private var nextOffset: Int

    init(noncesPerRefill: Int) {
        precondition(noncesPerRefill > 0)
        storage = .allocate(byteCount: noncesPerRefill * AESGCM.nonceByteCount, alignment: 16)
        nextOffset = storage.count  // empty: the first take refills
    }

    deinit {
        storage.deallocate()
    }

    /// Writes the next unused nonce to `destination` (12 bytes).
    /// - Throws: `CryptoError.randomGenerationFailed` if the CSPRNG fails; nothing is written.
    @inline(__always)
    func take(into destination: UnsafeMutableRawPointer) throws {
        if nextOffset == storage.count {
            try refill()
        }
        destination.copyMemory(from: storage.baseAddress! + nextOffset, byteCount: AESGCM.nonceByteCount)
        nextOffset += AESGCM.nonceByteCount
    }

    private func refill() throws {
        let filled = RAND_bytes(storage.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(storage.count))
        guard filled == 1 else {
            throw OpenSSLError.drain(as: .randomGenerationFailed)
        }
        nextOffset = 0
    }
}
