import Foundation
import RescindCrypto
import RescindProtocol
import Testing

@testable import RescindClient

/// The revocation's re-encryption (`RecordCipher.resealIntoBatches`): records downloaded under
/// the old FMK, re-sealed on every core straight into binary upload bodies. What the server
/// receives is checked by decoding the bodies as the server does and opening every record.
@Suite("Re-encryption into upload batch bodies")
struct RecordCipherBatchTests {
    let familyMemberID = UUID()
    let oldKey = SecretKey()
    let newKey = SecretKey()

    /// `count` records under `oldKey` at FMK version 1, of varied sizes (empty included).
    func records(_ count: Int) throws -> (records: [RecordResponse], plaintexts: [[UInt8]]) {
        var records: [RecordResponse] = []
        var plaintexts: [[UInt8]] = []
        for index in 0..<count {
            let plaintext = (0..<(index * 37 % 3000)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) }
            let id = UUID()
            let sealed = try RecordCipher.seal(plaintext, recordID: id, version: 1, fmk: oldKey)
            records.append(
                RecordResponse(
                    recordID: id, familyMemberID: familyMemberID, fmkVersion: 1, nonce: sealed.nonce,
                    ciphertext: sealed.ciphertext, tag: sealed.tag, changeSeq: Int64(1000 + index)))
            plaintexts.append(plaintext)
        }
        return (records, plaintexts)
    }

    /// The bodies decoded as the grant service decodes an upload.
    func decoded(_ batches: [BinaryRecords.UploadBatchWriter]) throws -> [StagedRecord] {
        try batches.flatMap { try BinaryRecords.decodeUploadBatch(Data($0.body)).records }
    }

    /// A staged record as the change feed would serve it after the commit.
    func served(_ staged: StagedRecord, version: Int) -> RecordResponse {
        RecordResponse(
            recordID: staged.recordID, familyMemberID: familyMemberID, fmkVersion: version, nonce: staged.nonce,
            ciphertext: staged.ciphertext, tag: staged.tag, changeSeq: 0)
    }

    @Test(arguments: [1, 2, 3, 8])
    func everyRecordOpensUnderTheNewKeyAndVersionInOrder(workers: Int) async throws {
        let (records, plaintexts) = try records(1_234)
        let batches = try await RecordCipher.resealIntoBatches(
            records, from: oldKey, to: newKey, newVersion: 2, batchSize: 100, maximumWorkers: workers)
        #expect(batches.map(\.count) == Array(repeating: 100, count: 12) + [34])
        let staged = try decoded(batches)
        #expect(staged.map(\.recordID) == records.map(\.recordID))
        #expect(staged.map(\.sourceChangeSeq) == records.map(\.changeSeq))
        for (index, record) in staged.enumerated() {
            #expect(try RecordCipher.open(served(record, version: 2), fmk: newKey) == plaintexts[index])
            // Bound to the new version and to its own id: not openable as version 1 or as another record.
            expectAuthenticationFailure { try RecordCipher.open(served(record, version: 1), fmk: newKey) }
            expectAuthenticationFailure { try RecordCipher.open(served(record, version: 2), fmk: oldKey) }
        }
        var moved = served(staged[0], version: 2)
        moved.recordID = staged[1].recordID
        expectAuthenticationFailure { try RecordCipher.open(moved, fmk: newKey) }
    }

    /// Fresh random nonces: none reused from the old records, none repeated across batches and
    /// workers, none repeated when the same records are re-encrypted again.
    @Test func noncesAreFreshAcrossBatchesWorkersAndCalls() async throws {
        let (records, _) = try records(600)
        var nonces = Set(records.map(\.nonce))
        for _ in 0..<2 {
            let staged = try decoded(
                try await RecordCipher.resealIntoBatches(
                    records, from: oldKey, to: newKey, newVersion: 2, batchSize: 50, maximumWorkers: 4))
            for record in staged {
                #expect(record.nonce.count == AESGCM.nonceByteCount)
                #expect(nonces.insert(record.nonce).inserted)
            }
        }
        #expect(nonces.count == 3 * records.count)
    }

    @Test func noRecordsGiveNoBatches() async throws {
        let batches = try await RecordCipher.resealIntoBatches([], from: oldKey, to: newKey, newVersion: 2, batchSize: 500)
        #expect(batches.isEmpty)
    }

    /// One bad record among many fails the whole call closed, on any number of workers:
    /// a wrong key, associated data that does not match (another version or another record's
    /// id), a tampered nonce, ciphertext or tag, or a record cut short. No batch is returned.
    @Test(arguments: [
        "wrong key", "wrong version", "wrong record id", "tampered nonce", "tampered ciphertext", "tampered tag",
        "truncated ciphertext", "truncated tag", "truncated to nothing",
    ])
    func oneBadRecordFailsTheWholeCallClosed(_ fault: String) async throws {
        var (records, _) = try records(700)
        let bad = 543
        switch fault {
        case "wrong version": records[bad].fmkVersion = 2
        case "wrong record id": records[bad].recordID = records[bad - 1].recordID
        case "tampered nonce": records[bad].nonce[records[bad].nonce.startIndex] ^= 1
        case "tampered ciphertext": records[bad].ciphertext[records[bad].ciphertext.startIndex + 5] ^= 0x10
        case "tampered tag": records[bad].tag[records[bad].tag.endIndex - 1] ^= 0x80
        case "truncated ciphertext": records[bad].ciphertext = records[bad].ciphertext.dropLast()
        case "truncated tag": records[bad].tag = records[bad].tag.prefix(15)
        case "truncated to nothing": (records[bad].nonce, records[bad].ciphertext, records[bad].tag) = (Data(), Data(), Data())
        default: break
        }
        let from = fault == "wrong key" ? SecretKey() : oldKey
        for workers in [1, 2, 5] {
            let error = await #expect(throws: CryptoError.self) {
                try await RecordCipher.resealIntoBatches(
                    records, from: from, to: newKey, newVersion: 2, batchSize: 64, maximumWorkers: workers)
            }
            // A nonce or tag of the wrong length is refused before any decryption; a truncated tag is never tried.
            #expect(error?.code == (["truncated tag", "truncated to nothing"].contains(fault) ? .invalidInput : .authenticationFailed))
        }
    }
}

/// Asserts that `body` throws `CryptoError.authenticationFailed`.
private func expectAuthenticationFailure<R>(sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> R) {
    let error = #expect(throws: CryptoError.self, sourceLocation: sourceLocation) { _ = try body() }
    #expect(error?.code == .authenticationFailed, sourceLocation: sourceLocation)
}
