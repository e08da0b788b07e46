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
    /// bodies of `batchSize` records, the batches on every core at once (off Swift's
    /// cooperative pool: `AESGCM.resealBatches`). No buffer per record: each worker keeps one
    /// pair of cipher contexts and one plaintext scratch for all its batches, and each record
    /// is opened from the downloaded nonce, ciphertext and tag where they lie.
    /// - Parameter maximumWorkers: at most this many batches at once (default: one per core).
    /// - Throws: `CryptoError.authenticationFailed` if a record does not open under `oldKey`
    ///   and its own id and version, `CryptoError.invalidInput` for a nonce or tag of the
    ///   wrong length; no batch is returned then.
    public static func resealIntoBatches(
        _ records: [RecordResponse], from oldKey: SecretKey, to newKey: SecretKey, newVersion: Int, batchSize: Int,
        maximumWorkers: Int = ProcessInfo.processInfo.activeProcessorCount
    ) async throws -> [BinaryRecords.UploadBatchWriter] {
        let size = max(1, batchSize)
        let batches = (records.count + size - 1) / size
        return try await AESGCM.resealBatches(count: batches, from: oldKey, to: newKey, maximumWorkers: maximumWorkers) {
            resealer, index in
            let start = index * size
            return try resealBatch(
                records[start..<min(start + size, records.count)], with: resealer, newVersion: UInt32(newVersion))
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
