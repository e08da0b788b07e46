import CLibCrypto

/// A MEASURING BASELINE, not an API for production code: the re-encryption loop written
/// straight against OpenSSL's EVP interface, the fastest this machine can move a record from
/// one AES-256-GCM key to another. `rescind-bench` runs it next to `AESGCMResealer` and
/// `AESGCM.reseal` over the same bytes and reports their ratio to it.
///
/// What it does per record is what a resealer must do and nothing else: set the IV of a
/// reused decryption context, authenticate the old associated data, decrypt into a reused
/// buffer and verify the tag, then set a fresh random IV on a reused encryption context,
/// authenticate the new associated data, encrypt into a second reused buffer and take the
/// tag. Key schedules are computed once; nonces are drawn from `RAND_bytes` 64 at a time (as
/// `AESGCMCipher` does). Nothing is allocated per record, so the gap to the real API is the
/// cost of its safety and convenience: a result array per record, zeroing the plaintext,
/// per-record error attribution.
///
/// Lives here because this is the only module that may call OpenSSL; it is not the product's
/// API but the dev kit's (`@_spi(DevKit)`: only `rescind-bench` and the tests import it).
@_spi(DevKit) public enum RawEVPBaseline {
    /// Re-encrypts `requests[range]` from `oldKey` to `newKey` on the calling thread and
    /// discards the results (each overwrites the last).
    /// - Returns: a checksum of the produced tags, so the work cannot be optimised away.
    /// - Throws: `CryptoError.authenticationFailed` (with `itemIndex`) for a record that does
    ///   not open under `oldKey` and its old associated data; `libraryFailure` from OpenSSL.
    public static func reseal(
        _ requests: [AESGCM.ResealRequest], in range: Range<Int>, from oldKey: SecretKey, to newKey: SecretKey
    ) throws -> UInt64 {
        let opener = try oldKey.withUnsafeBytes {
            try EVPCipherContext(algorithm: .aes256GCM, key: $0, encrypting: false)
        }
        let sealer = try newKey.withUnsafeBytes {
            try EVPCipherContext(algorithm: .aes256GCM, key: $0, encrypting: true)
        }
        let largest = range.map { requests[$0].box.combined.count }.max() ?? 0
        let plaintext = UnsafeMutablePointer<UInt8>.allocate(capacity: max(1, largest))
        let output = UnsafeMutablePointer<UInt8>.allocate(capacity: max(1, largest))
        let nonceCount = 64
        let nonces = UnsafeMutablePointer<UInt8>.allocate(capacity: nonceCount * AESGCM.nonceByteCount)
        defer {
            plaintext.deallocate()
            output.deallocate()
            nonces.deallocate()
        }
        var nextNonce = nonceCount
        var checksum: UInt64 = 0
        for index in range {
            let request = requests[index]
            if nextNonce == nonceCount {
                guard RAND_bytes(nonces, Int32(nonceCount * AESGCM.nonceByteCount)) == 1 else {
                    throw OpenSSLError.drain(as: .randomGenerationFailed)
                }
                nextNonce = 0
            }
            let nonce = nonces + nextNonce * AESGCM.nonceByteCount
            nextNonce += 1
            let count = request.box.ciphertextByteCount
            try request.box.combined.withUnsafeBufferPointer { combined in
                let iv = combined.baseAddress!
                let ciphertext = iv + AESGCM.nonceByteCount
                var written: Int32 = 0
                let opened = try opener.withContext { ctx in
                    try OpenSSLError.check(EVP_CipherInit_ex(ctx, nil, nil, nil, iv, -1), or: .libraryFailure)
                    try request.oldAssociatedData.withUnsafeBufferPointer { ad in
                        try OpenSSLError.check(
                            EVP_CipherUpdate(ctx, nil, &written, ad.baseAddress, Int32(ad.count)), or: .libraryFailure)
                    }
                    try OpenSSLError.check(
                        EVP_CipherUpdate(ctx, plaintext, &written, ciphertext, Int32(count)), or: .libraryFailure)
                    try OpenSSLError.check(
                        EVP_CIPHER_CTX_ctrl(
                            ctx, EVP_CTRL_GCM_SET_TAG, Int32(AESGCM.tagByteCount),
                            UnsafeMutableRawPointer(mutating: ciphertext + count)),
                        or: .libraryFailure)
                    return EVP_CipherFinal_ex(ctx, plaintext + count, &written) == 1
                }
                guard opened else {
                    throw OpenSSLError.drain(as: .authenticationFailed).at(index: index)
                }
                try sealer.withContext { ctx in
                    try OpenSSLError.check(EVP_CipherInit_ex(ctx, nil, nil, nil, nonce, -1), or: .libraryFailure)
                    try request.newAssociatedData.withUnsafeBufferPointer { ad in
                        try OpenSSLError.check(
                            EVP_CipherUpdate(ctx, nil, &written, ad.baseAddress, Int32(ad.count)), or: .libraryFailure)
                    }
                    try OpenSSLError.check(
                        EVP_CipherUpdate(ctx, output, &written, plaintext, Int32(count)), or: .libraryFailure)
                    try OpenSSLError.check(EVP_CipherFinal_ex(ctx, output + count, &written), or: .libraryFailure)
                    try OpenSSLError.check(
                        EVP_CIPHER_CTX_ctrl(
                            ctx, EVP_CTRL_GCM_GET_TAG, Int32(AESGCM.tagByteCount), UnsafeMutableRawPointer(output + count)),
                        or: .libraryFailure)
                }
            }
            checksum &+= UnsafeRawPointer(output + count).loadUnaligned(as: UInt64.self)
        }
        return checksum
    }
}
