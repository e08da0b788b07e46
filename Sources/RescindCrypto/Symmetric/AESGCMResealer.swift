#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Re-encrypts records from one key to another: open under the old key and associated data,
/// seal under the new key with a fresh nonce and new associated data.
///
/// This is the per-record step of a revocation (old FMK → new FMK) and of a cryptographic
/// erasure (FMK → ephemeral key that is never stored). The plaintext passes through one
/// reusable scratch buffer that is zeroed after every record, so a record costs no allocation
/// besides its result (none when appending to a reused buffer) and plaintext never outlives
/// the call.
///
/// Not `Sendable`: use one resealer per thread (`AESGCM.reseal(_:from:to:)` does).
public final class AESGCMResealer {
    private let opener: AESGCMCipher
    private let sealer: AESGCMCipher
    private var scratch: UnsafeMutableRawBufferPointer

    public init(from oldKey: SecretKey, to newKey: SecretKey) {
        opener = AESGCMCipher(key: oldKey)
        sealer = AESGCMCipher(key: newKey)
        scratch = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    }

    deinit {
        Sodium.zero(scratch)
        scratch.deallocate()
    }

    /// Re-encrypts one box.
    /// - Throws: `CryptoError.authenticationFailed` if `box` does not open under the old key
    ///   and `oldAssociatedData`; nothing is sealed then.
    public func reseal(
        _ box: AESGCM.SealedBox,
        oldAssociatedData: [UInt8],
        newAssociatedData: [UInt8]
    ) throws -> AESGCM.SealedBox {
        try box.combined.withUnsafeBytes { combined in
            try withOpened(combined, authenticating: oldAssociatedData) { plaintext in
                try newAssociatedData.withUnsafeBytes { associatedData in
                    try sealer.seal(plaintext, authenticating: associatedData, fixedNonce: nil)
                }
            }
        }
    }

    /// Re-encrypts one record given in wire layout (`nonce ‖ ciphertext ‖ tag`) and appends
    /// the new record, in the same layout, to `output`.
    ///
    /// For building an upload batch in one buffer that is reused batch after batch: then a
    /// record costs no allocation at all (the per-record result of the other overload is
    /// what keeps that one below the raw OpenSSL limit, see docs/benchmarks.md).
    /// - Throws: `CryptoError.invalidInput` if `combined` is shorter than 28 bytes,
    ///   `CryptoError.authenticationFailed` if it does not open under the old key and
    ///   `oldAssociatedData`; `output` is unchanged then.
    public func reseal(
        combined: some ContiguousBytes,
        oldAssociatedData: [UInt8],
        newAssociatedData: [UInt8],
        appendingTo output: inout [UInt8]
    ) throws {
        try combined.withUnsafeBytes { combined in
            try withOpened(combined, authenticating: oldAssociatedData) { plaintext in
                try newAssociatedData.withUnsafeBytes { associatedData in
                    try sealer.seal(plaintext, authenticating: associatedData, appendingTo: &output)
                }
            }
        }
    }

    /// Re-encrypts one record given as its three parts (as a download holds them, each where
    /// it lies: no copy into one buffer first) and appends the new record in wire layout
    /// (`nonce ‖ ciphertext ‖ tag`) to `output`.
    /// - Throws: `CryptoError.invalidInput` unless `nonce` is 12 bytes and `tag` 16,
    ///   `CryptoError.authenticationFailed` if the record does not open under the old key and
    ///   `oldAssociatedData`; `output` is unchanged then.
    public func reseal(
        nonce: some ContiguousBytes,
        ciphertext: some ContiguousBytes,
        tag: some ContiguousBytes,
        oldAssociatedData: [UInt8],
        newAssociatedData: [UInt8],
        appendingTo output: inout [UInt8]
    ) throws {
        try nonce.withUnsafeBytes { nonce in
            try ciphertext.withUnsafeBytes { ciphertext in
                try tag.withUnsafeBytes { tag in
                    try withOpened(
                        nonce: nonce, ciphertext: ciphertext, tag: tag, authenticating: oldAssociatedData
                    ) { plaintext in
                        try newAssociatedData.withUnsafeBytes { associatedData in
                            try sealer.seal(plaintext, authenticating: associatedData, appendingTo: &output)
                        }
                    }
                }
            }
        }
    }

    /// Opens `combined` under the old key into the scratch buffer, hands the plaintext to
    /// `body`, and zeroes it afterwards whatever happens.
    private func withOpened<Result>(
        _ combined: UnsafeRawBufferPointer, authenticating oldAssociatedData: [UInt8],
        _ body: (UnsafeRawBufferPointer) throws -> Result
    ) throws -> Result {
        guard combined.count >= AESGCM.overheadByteCount else { throw CryptoError(.invalidInput) }
        let tagStart = combined.count - AESGCM.tagByteCount
        return try withOpened(
            nonce: UnsafeRawBufferPointer(rebasing: combined[..<AESGCM.nonceByteCount]),
            ciphertext: UnsafeRawBufferPointer(rebasing: combined[AESGCM.nonceByteCount..<tagStart]),
            tag: UnsafeRawBufferPointer(rebasing: combined[tagStart...]),
            authenticating: oldAssociatedData, body)
    }

    /// As `withOpened(_:authenticating:_:)`, for a record given as its three parts.
    private func withOpened<Result>(
        nonce: UnsafeRawBufferPointer, ciphertext: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer,
        authenticating oldAssociatedData: [UInt8],
        _ body: (UnsafeRawBufferPointer) throws -> Result
    ) throws -> Result {
        let count = ciphertext.count
        reserveScratch(count)
        let plaintext = UnsafeMutableRawBufferPointer(rebasing: scratch[..<count])
        defer { Sodium.zero(plaintext) }
        try oldAssociatedData.withUnsafeBytes { associatedData in
            try opener.open(nonce: nonce, ciphertext: ciphertext, tag: tag, authenticating: associatedData, into: plaintext)
        }
        return try body(UnsafeRawBufferPointer(plaintext))
    }

    /// Re-encrypts `requests` in order on the calling thread; all or nothing.
    /// - Throws: the first failure, with `itemIndex` set to its position in `requests`.
    public func reseal(_ requests: [AESGCM.ResealRequest]) throws -> [AESGCM.SealedBox] {
        var results: [AESGCM.SealedBox] = []
        results.reserveCapacity(requests.count)
        for index in requests.indices {
            results.append(try reseal(requests[index], at: index))
        }
        return results
    }

    /// One request, with a failure attributed to `index`.
    func reseal(_ request: AESGCM.ResealRequest, at index: Int) throws -> AESGCM.SealedBox {
        do {
            return try reseal(
                request.box,
                oldAssociatedData: request.oldAssociatedData,
                newAssociatedData: request.newAssociatedData
            )
        } catch let error as CryptoError {
            throw error.at(index: index)
        }
    }

    private func reserveScratch(_ count: Int) {
        guard count > scratch.count else { return }
        Sodium.zero(scratch)
        scratch.deallocate()
        // Round up so a batch of similar records settles on one buffer quickly.
        let capacity = max(4096, count + count / 4)
        scratch = .allocate(byteCount: capacity, alignment: 16)
    }
}

@available(*, unavailable, message: "AESGCMResealer holds OpenSSL state: use one per thread")
extension AESGCMResealer: Sendable {}
