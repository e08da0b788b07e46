import Foundation
import RescindCrypto
import RescindProtocol

/// Record encryption as stored by the grant service: AES-256-GCM under the FMK
/// with the record id and FMK version bound as associated data, so a record
/// cannot be swapped with another or replayed under another version.
public enum RecordCipher {
    public static func seal(_ plaintext: [UInt8], recordID: UUID, version: Int, fmk: SecretKey) throws -> PutRecordRequest {
        let box = try AESGCM.seal(
            plaintext, using: fmk,
            authenticating: RecordAssociatedData.make(recordID: recordID, fmkVersion: UInt32(version)))
        return PutRecordRequest(
            fmkVersion: version, nonce: Data(box.nonce), ciphertext: Data(box.ciphertext), tag: Data(box.tag))
    }

    /// - Throws: `CryptoError.authenticationFailed` for a wrong key, version or record id, or tampering.
    public static func open(_ record: RecordResponse, fmk: SecretKey) throws -> [UInt8] {
        try AESGCM.open(
            try box(nonce: record.nonce, ciphertext: record.ciphertext, tag: record.tag), using: fmk,
            authenticating: RecordAssociatedData.make(recordID: record.recordID, fmkVersion: UInt32(record.fmkVersion)))
    }

    static func box(nonce: Data, ciphertext: Data, tag: Data) throws -> AESGCM.SealedBox {
        try AESGCM.SealedBox(nonce: [UInt8](nonce), ciphertext: [UInt8](ciphertext), tag: [UInt8](tag))
    }

    /// Re-encrypts records from one FMK version to the next on every core.
    public static func reseal(
        _ records: [RecordResponse], from oldKey: SecretKey, to newKey: SecretKey, newVersion: Int
    ) async throws -> [StagedRecord] {
        let requests = try records.map { record in
            AESGCM.ResealRequest(
                box: try box(nonce: record.nonce, ciphertext: record.ciphertext, tag: record.tag),
                oldAssociatedData: RecordAssociatedData.make(recordID: record.recordID, fmkVersion: UInt32(record.fmkVersion)),
                newAssociatedData: RecordAssociatedData.make(recordID: record.recordID, fmkVersion: UInt32(newVersion)))
        }
        let boxes = try await AESGCM.reseal(requests, from: oldKey, to: newKey)
        return zip(records, boxes).map { record, box in
            StagedRecord(
                recordID: record.recordID, sourceChangeSeq: record.changeSeq, nonce: Data(box.nonce),
                ciphertext: Data(box.ciphertext), tag: Data(box.tag))
        }
    }

    /// Re-encrypts records from one FMK version to the next straight into upload batch
    /// bodies of `batchSize` records, the batches on every core at once. No buffer per
    /// record: each batch reuses one scratch buffer and one pair of cipher contexts.
    /// - Throws: `CryptoError.authenticationFailed` if a record does not open under `oldKey`.
    /// - Parameter maximumWorkers: at most this many batches at once (default: one per core).
    public static func resealIntoBatches(
        _ records: [RecordResponse], from oldKey: SecretKey, to newKey: SecretKey, newVersion: Int, batchSize: Int,
        maximumWorkers: Int = ProcessInfo.processInfo.activeProcessorCount
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
