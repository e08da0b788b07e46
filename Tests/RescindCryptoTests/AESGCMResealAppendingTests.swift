import Foundation
import Testing

@testable import RescindCrypto

/// The allocation-free form of re-encryption: records appended to one reusable buffer.
@Suite("AES-256-GCM re-encryption into a reused buffer")
struct AESGCMResealAppendingTests {
    let oldKey = SecretKey()
    let newKey = SecretKey()

    @Test func appendedRecordsOpenUnderTheNewKeyAndBindingInOrder() throws {
        let records = try AESGCMResealTests.records(40, key: oldKey, version: 1)
        let resealer = AESGCMResealer(from: oldKey, to: newKey)
        var output: [UInt8] = [0xAA]  // bytes already in the buffer stay untouched
        for record in records {
            try resealer.reseal(
                combined: record.box.combined,
                oldAssociatedData: RecordAssociatedData.make(recordID: record.id, fmkVersion: 1),
                newAssociatedData: RecordAssociatedData.make(recordID: record.id, fmkVersion: 2),
                appendingTo: &output)
        }
        #expect(output.first == 0xAA)
        var offset = 1
        for record in records {
            let length = record.plaintext.count + AESGCM.overheadByteCount
            let box = try AESGCM.SealedBox(combined: Array(output[offset..<(offset + length)]))
            #expect(box.nonce != record.box.nonce)
            let newAD = RecordAssociatedData.make(recordID: record.id, fmkVersion: 2)
            #expect(try AESGCM.open(box, using: newKey, authenticating: newAD) == record.plaintext)
            expectCryptoError(.authenticationFailed) {
                try AESGCM.open(box, using: newKey, authenticating: RecordAssociatedData.make(recordID: record.id, fmkVersion: 1))
            }
            offset += length
        }
        #expect(offset == output.count)
    }

    @Test func aReusedBufferGivesFreshNoncesEveryBatch() throws {
        let record = try AESGCMResealTests.records(1, key: oldKey, version: 1)[0]
        let resealer = AESGCMResealer(from: oldKey, to: newKey)
        var output: [UInt8] = []
        var nonces: Set<[UInt8]> = []
        for _ in 0..<100 {
            output.removeAll(keepingCapacity: true)
            try resealer.reseal(
                combined: record.box.combined, oldAssociatedData: RecordAssociatedData.make(recordID: record.id, fmkVersion: 1),
                newAssociatedData: RecordAssociatedData.make(recordID: record.id, fmkVersion: 2), appendingTo: &output)
            nonces.insert(Array(output[..<AESGCM.nonceByteCount]))
        }
        #expect(nonces.count == 100)
    }

    /// Wrong key, wrong associated data, tampering and truncation all fail closed: an error,
    /// and not one byte appended.
    @Test(arguments: ["wrong key", "wrong associated data", "tampered ciphertext", "tampered tag", "truncated"])
    func failuresLeaveTheBufferAsItWas(_ fault: String) throws {
        let record = try AESGCMResealTests.records(1, key: oldKey, version: 1)[0]
        let resealer = AESGCMResealer(from: fault == "wrong key" ? SecretKey() : oldKey, to: newKey)
        var combined = record.box.combined
        var oldAD = RecordAssociatedData.make(recordID: record.id, fmkVersion: 1)
        switch fault {
        case "wrong associated data": oldAD = RecordAssociatedData.make(recordID: UUID(), fmkVersion: 1)
        case "tampered ciphertext": combined[AESGCM.nonceByteCount] ^= 1
        case "tampered tag": combined[combined.count - 1] ^= 0x80
        case "truncated": combined = Array(combined.prefix(AESGCM.overheadByteCount - 1))
        default: break
        }
        let before: [UInt8] = [1, 2, 3]
        var output = before
        expectCryptoError(fault == "truncated" ? .invalidInput : .authenticationFailed) {
            try resealer.reseal(
                combined: combined, oldAssociatedData: oldAD,
                newAssociatedData: RecordAssociatedData.make(recordID: record.id, fmkVersion: 2), appendingTo: &output)
        }
        #expect(output == before)
    }
}
