import Foundation
import RescindCrypto
import RescindProtocol
import Synchronization

/// An experiment beside the client's path: the same per-worker work as
/// `RecordCipher.resealIntoBatches` (one resealer per worker for every batch it takes from a
/// shared cursor, records opened where they lie) but the workers run as Swift tasks on the
/// cooperative pool instead of `DispatchQueue.concurrentPerform`. Measured in the same run to
/// tell the thread pool's part in the 2-core ratio from the work's. Not product code.
enum CooperativeClientPath {
    static func resealIntoBatches(
        _ records: [RecordResponse], from oldKey: SecretKey, to newKey: SecretKey, newVersion: Int, batchSize: Int,
        maximumWorkers: Int
    ) async throws -> [BinaryRecords.UploadBatchWriter] {
        let size = max(1, batchSize)
        let count = (records.count + size - 1) / size
        let workers = max(1, min(maximumWorkers, count))
        let cursor = Cursor()
        return try await withThrowingTaskGroup(of: [(Int, BinaryRecords.UploadBatchWriter)].self) { group in
            for _ in 0..<workers {
                group.addTask {
                    let resealer = AESGCMResealer(from: oldKey, to: newKey)
                    var done: [(Int, BinaryRecords.UploadBatchWriter)] = []
                    while let index = cursor.take(below: count) {
                        let start = index * size
                        done.append(
                            (index, try resealBatch(records[start..<min(start + size, records.count)], with: resealer, newVersion: UInt32(newVersion))))
                    }
                    return done
                }
            }
            var batches = [BinaryRecords.UploadBatchWriter?](repeating: nil, count: count)
            for try await done in group {
                for (index, batch) in done { batches[index] = batch }
            }
            return batches.map { $0! }
        }
    }

    private final class Cursor: Sendable {
        private let next = Atomic<Int>(0)

        func take(below count: Int) -> Int? {
            let index = next.wrappingAdd(1, ordering: .relaxed).oldValue
            return index < count ? index : nil
        }
    }

    private static func resealBatch(
        _ records: ArraySlice<RecordResponse>, with resealer: AESGCMResealer, newVersion: UInt32
    ) throws -> BinaryRecords.UploadBatchWriter {
        var writer = BinaryRecords.UploadBatchWriter(
            capacity: records.reduce(0) { $0 + BinaryRecords.uploadOverhead + $1.ciphertext.count })
        for record in records {
            try writer.append(
                recordID: record.recordID, sourceChangeSeq: record.changeSeq,
                sealedByteCount: record.nonce.count + record.ciphertext.count + record.tag.count
            ) { body in
                try resealer.reseal(
                    nonce: record.nonce, ciphertext: record.ciphertext, tag: record.tag,
                    oldAssociatedData: RecordAssociatedData.make(recordID: record.recordID, fmkVersion: UInt32(record.fmkVersion)),
                    newAssociatedData: RecordAssociatedData.make(recordID: record.recordID, fmkVersion: newVersion),
                    appendingTo: &body)
            }
        }
        return writer
    }
}
