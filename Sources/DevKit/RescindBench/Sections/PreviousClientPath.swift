import Foundation
import RescindCrypto
import RescindProtocol

/// `RecordCipher.resealIntoBatches` as it was before it ran one worker per core off the
/// cooperative pool, kept in the bench so that every run measures the change against it on
/// the same records and the same load: one
/// Swift task per batch on the cooperative pool (at most `maximumWorkers` at once), a new
/// resealer (two cipher contexts, a nonce buffer, a scratch) per batch, and each record
/// copied into one `nonce ‖ ciphertext ‖ tag` buffer before it is opened. Same output format,
/// same public API calls; not product code.
enum PreviousClientPath {
    static func resealIntoBatches(
        _ records: [RecordResponse], from oldKey: SecretKey, to newKey: SecretKey, newVersion: Int, batchSize: Int,
        maximumWorkers: Int
    ) async throws -> [BinaryRecords.UploadBatchWriter] {
        let size = max(1, batchSize)
        let starts = Array(stride(from: 0, to: records.count, by: size))
        let workers = max(1, maximumWorkers)
        return try await withThrowingTaskGroup(of: (Int, BinaryRecords.UploadBatchWriter).self) { group in
            var batches = [BinaryRecords.UploadBatchWriter?](repeating: nil, count: starts.count)
            for (index, start) in starts.enumerated() {
                if index >= workers, let finished = try await group.next() { batches[finished.0] = finished.1 }
                let slice = records[start..<min(start + size, records.count)]
                group.addTask {
                    (index, try resealBatch(slice, from: oldKey, to: newKey, newVersion: newVersion))
                }
            }
            for try await (index, batch) in group { batches[index] = batch }
            return batches.map { $0! }
        }
    }

    private static func resealBatch(
        _ records: ArraySlice<RecordResponse>, from oldKey: SecretKey, to newKey: SecretKey, newVersion: Int
    ) throws -> BinaryRecords.UploadBatchWriter {
        let resealer = AESGCMResealer(from: oldKey, to: newKey)
        var writer = BinaryRecords.UploadBatchWriter(
            capacity: records.reduce(0) { $0 + BinaryRecords.uploadOverhead + $1.ciphertext.count })
        var combined: [UInt8] = []
        for record in records {
            combined.removeAll(keepingCapacity: true)
            combined += record.nonce
            combined += record.ciphertext
            combined += record.tag
            try writer.append(
                recordID: record.recordID, sourceChangeSeq: record.changeSeq, sealedByteCount: combined.count
            ) { body in
                try resealer.reseal(
                    combined: combined,
                    oldAssociatedData: RecordAssociatedData.make(recordID: record.recordID, fmkVersion: UInt32(record.fmkVersion)),
                    newAssociatedData: RecordAssociatedData.make(recordID: record.recordID, fmkVersion: UInt32(newVersion)),
                    appendingTo: &body)
            }
        }
        return writer
    }
}
