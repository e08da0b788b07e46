import Dispatch

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension AESGCM {
    /// One record to move from the old key to the new key.
    public struct ResealRequest: Sendable {
        public var box: SealedBox
        /// The associated data the record was sealed with (old record binding).
        public var oldAssociatedData: [UInt8]
        /// The associated data to seal it with (new record binding, e.g. the new FMK version).
        public var newAssociatedData: [UInt8]

        public init(box: SealedBox, oldAssociatedData: [UInt8], newAssociatedData: [UInt8]) {
            self.box = box
            self.oldAssociatedData = oldAssociatedData
            self.newAssociatedData = newAssociatedData
        }
    }

    /// Below this many records per worker, another worker costs more than it saves.
    static let minimumRecordsPerWorker = 64

    /// Re-encrypts a batch across all cores; all or nothing. **Blocks** the calling thread
    /// until done: from async code call the `async` overload.
    ///
    /// The batch is cut into one contiguous slice per worker (`DispatchQueue.concurrentPerform`),
    /// each with its own `AESGCMResealer`, so workers share nothing but the read-only keys and
    /// input. Results keep the order of `requests`.
    /// - Parameter maximumWorkers: upper bound on parallel workers; defaults to the active
    ///   processor count.
    /// - Throws: the failure with the lowest `itemIndex` if any record fails to open; no
    ///   result is returned then.
    public static func reseal(
        _ requests: [ResealRequest],
        from oldKey: SecretKey,
        to newKey: SecretKey,
        maximumWorkers: Int = ProcessInfo.processInfo.activeProcessorCount
    ) throws -> [SealedBox] {
        let count = requests.count
        let workers = max(1, min(maximumWorkers, count / minimumRecordsPerWorker))
        if workers == 1 {
            return try AESGCMResealer(from: oldKey, to: newKey).reseal(requests)
        }
        var results = [SealedBox?](repeating: nil, count: count)
        var failures = [CryptoError?](repeating: nil, count: workers)
        results.withUnsafeMutableBufferPointer { results in
            failures.withUnsafeMutableBufferPointer { failures in
                let results = DisjointWrites(results)
                let failures = DisjointWrites(failures)
                DispatchQueue.concurrentPerform(iterations: workers) { worker in
                    let slice = (count * worker / workers)..<(count * (worker + 1) / workers)
                    let resealer = AESGCMResealer(from: oldKey, to: newKey)
                    for index in slice {
                        do {
                            results[index] = try resealer.reseal(requests[index], at: index)
                        } catch {
                            failures[worker] = (error as? CryptoError) ?? CryptoError(.libraryFailure, itemIndex: index)
                            return
                        }
                    }
                }
            }
        }
        // Slices are in index order, so the first worker that failed holds the lowest index.
        if let failure = failures.lazy.compactMap({ $0 }).first {
            throw failure
        }
        return results.map { $0! }
    }

    /// Re-encrypts a batch across all cores without blocking Swift's cooperative thread pool:
    /// the work runs on a Dispatch queue and this task suspends until it is done.
    /// Cancellation is not observed once the batch has started.
    public static func reseal(
        _ requests: [ResealRequest],
        from oldKey: SecretKey,
        to newKey: SecretKey,
        maximumWorkers: Int = ProcessInfo.processInfo.activeProcessorCount
    ) async throws -> [SealedBox] {
        try await BlockingWork.run {
            try reseal(requests, from: oldKey, to: newKey, maximumWorkers: maximumWorkers)
        }
    }
}

/// A buffer that several `concurrentPerform` workers write into.
///
/// `@unchecked Sendable`: every index is written by exactly one worker (slices are disjoint,
/// or, in `resealBatches`, each index is handed out once by an atomic cursor),
/// nothing reads the buffer until `concurrentPerform` has returned (which happens-after every
/// worker), and the buffer outlives that call (it is scoped by `withUnsafeMutableBufferPointer`).
struct DisjointWrites<Element>: @unchecked Sendable {
    let buffer: UnsafeMutableBufferPointer<Element>

    init(_ buffer: UnsafeMutableBufferPointer<Element>) {
        self.buffer = buffer
    }

    subscript(index: Int) -> Element {
        get { buffer[index] }
        nonmutating set { buffer[index] = newValue }
    }
}
