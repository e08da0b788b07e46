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
            StagedRecord(recordID: record.recordID, nonce: Data(box.nonce), ciphertext: Data(box.ciphertext), tag: Data(box.tag))
        }
    }
}
