import Dispatch
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension AESGCM {
    /// Re-encrypts batches of records on every core, each batch built by `batch`: for callers
    /// that seal straight into their own output (an upload body) rather than into a
    /// `SealedBox` per record. **Runs off Swift's cooperative pool** (Dispatch); this task
    /// suspends until every batch is done.
    ///
    /// One worker per core (at most `maximumWorkers`, at most `count`), each with one
    /// `AESGCMResealer` for all the batches it takes, so contexts, nonce buffer and plaintext
    /// scratch are set up once per worker and never shared. Workers take the next batch index
    /// as they finish one, so a worker slowed by another process does not leave the rest idle
    /// at the end.
    ///
    /// - Parameters:
    ///   - count: batches; `batch` is called once for each index in `0..<count`.
    ///   - batch: builds batch `index` with the worker's resealer. Called on a worker thread,
    ///     one batch at a time per worker.
    /// - Returns: the batches in index order.
    /// - Throws: the failure of the lowest-numbered batch among those that failed before the
    ///   workers stopped; nothing is returned then. After a failure no worker takes another
    ///   batch (a batch already in hand finishes), so the batches after it are never tried and
    ///   their failures never seen. Batches are handed out in index order, so every batch
    ///   numbered below the one thrown was run and did not fail.
    public static func resealBatches<Batch: Sendable>(
        count: Int,
        from oldKey: SecretKey,
        to newKey: SecretKey,
        maximumWorkers: Int = ProcessInfo.processInfo.activeProcessorCount,
        _ batch: @escaping @Sendable (AESGCMResealer, Int) throws -> Batch
    ) async throws -> [Batch] {
        guard count > 0 else { return [] }
        return try await BlockingWork.run {
            try resealBatchesBlocking(count: count, from: oldKey, to: newKey, maximumWorkers: maximumWorkers, batch)
        }
    }

    /// The blocking body of `resealBatches`.
    static func resealBatchesBlocking<Batch>(
        count: Int,
        from oldKey: SecretKey,
        to newKey: SecretKey,
        maximumWorkers: Int,
        _ batch: @Sendable (AESGCMResealer, Int) throws -> Batch
    ) throws -> [Batch] {
        let workers = max(1, min(maximumWorkers, count))
        let cursor = BatchCursor()
        var results = [Batch?](repeating: nil, count: count)
        var failures = [(index: Int, error: any Error)?](repeating: nil, count: workers)
        results.withUnsafeMutableBufferPointer { results in
            failures.withUnsafeMutableBufferPointer { failures in
                let results = DisjointWrites(results)
                let failures = DisjointWrites(failures)
                // With one worker, concurrentPerform runs it on this thread.
                DispatchQueue.concurrentPerform(iterations: workers) { worker in
                    let resealer = AESGCMResealer(from: oldKey, to: newKey)
                    while let index = cursor.take(below: count) {
                        do {
                            results[index] = try batch(resealer, index)
                        } catch {
                            failures[worker] = (index, error)
                            cursor.stop()
                            return
                        }
                    }
                }
            }
        }
        if let failure = failures.compactMap({ $0 }).min(by: { $0.index < $1.index }) {
            throw failure.error
        }
        return results.map { $0! }
    }
}

/// The next batch index for whichever worker asks first; `stop` makes every later `take`
/// return nil.
private final class BatchCursor: Sendable {
    private let next = Atomic<Int>(0)

    func take(below count: Int) -> Int? {
        let index = next.wrappingAdd(1, ordering: .relaxed).oldValue
        return index < count ? index : nil
    }

    func stop() {
        next.store(Int.max / 2, ordering: .relaxed)
    }
}
