import Foundation
import Testing

@testable import RescindCrypto

@Suite("AES-256-GCM re-encryption")
struct AESGCMResealTests {
    /// `count` records sealed under `key`, bound to their ids and `version`.
    static func records(_ count: Int, key: SecretKey, version: UInt32) throws -> [(
        id: UUID, plaintext: [UInt8], box: AESGCM.SealedBox
    )] {
        let cipher = AESGCMCipher(key: key)
        return try (0..<count).map { index in
            let id = UUID()
            let plaintext =
                Array("record \(index) ".utf8) + Array(repeating: UInt8(truncatingIfNeeded: index), count: index % 300)
            let box = try cipher.seal(
                plaintext,
                authenticating: RecordAssociatedData.make(recordID: id, fmkVersion: version)
            )
            return (id, plaintext, box)
        }
    }

    @Test func resealMovesARecordToTheNewKeyAndBinding() throws {
        let oldKey = SecretKey()
        let newKey = SecretKey()
        let record = try Self.records(1, key: oldKey, version: 1)[0]
        let resealer = AESGCMResealer(from: oldKey, to: newKey)
        let newAD = RecordAssociatedData.make(recordID: record.id, fmkVersion: 2)
        let resealed = try resealer.reseal(
            record.box,
            oldAssociatedData: RecordAssociatedData.make(recordID: record.id, fmkVersion: 1),
            newAssociatedData: newAD
        )
        #expect(resealed.nonce != record.box.nonce)
        #expect(try AESGCM.open(resealed, using: newKey, authenticating: newAD) == record.plaintext)
        expectCryptoError(.authenticationFailed) { try AESGCM.open(resealed, using: oldKey, authenticating: newAD) }
    }

    @Test func resealRefusesARecordThatDoesNotOpen() throws {
        let oldKey = SecretKey()
        let record = try Self.records(1, key: oldKey, version: 1)[0]
        let resealer = AESGCMResealer(from: oldKey, to: SecretKey())
        expectCryptoError(.authenticationFailed) {
            try resealer.reseal(
                record.box,
                oldAssociatedData: RecordAssociatedData.make(recordID: record.id, fmkVersion: 2),
                newAssociatedData: []
            )
        }
    }

    @Test func concurrentBatchMatchesInputOrder() async throws {
        let oldKey = SecretKey()
        let newKey = SecretKey()
        let records = try Self.records(500, key: oldKey, version: 4)
        let requests = records.map {
            AESGCM.ResealRequest(
                box: $0.box,
                oldAssociatedData: RecordAssociatedData.make(recordID: $0.id, fmkVersion: 4),
                newAssociatedData: RecordAssociatedData.make(recordID: $0.id, fmkVersion: 5)
            )
        }
        let resealed = try await AESGCM.reseal(requests, from: oldKey, to: newKey, maximumWorkers: 4)
        #expect(resealed.count == records.count)
        let cipher = AESGCMCipher(key: newKey)
        for (record, box) in zip(records, resealed) {
            #expect(
                try cipher.open(box, authenticating: RecordAssociatedData.make(recordID: record.id, fmkVersion: 5))
                    == record.plaintext
            )
        }
    }

    @Test func concurrentBatchFailsWholeAndNamesTheFirstBadRecord() throws {
        let oldKey = SecretKey()
        let records = try Self.records(400, key: oldKey, version: 1)
        var requests = records.map {
            AESGCM.ResealRequest(
                box: $0.box,
                oldAssociatedData: RecordAssociatedData.make(recordID: $0.id, fmkVersion: 1),
                newAssociatedData: RecordAssociatedData.make(recordID: $0.id, fmkVersion: 2)
            )
        }
        for index in [321, 350, 150] {
            requests[index].box = try AESGCM.SealedBox(combined: flippingBit(requests[index].box.combined, at: 20))
        }
        let error = #expect(throws: CryptoError.self) {
            try AESGCM.reseal(requests, from: oldKey, to: SecretKey(), maximumWorkers: 3)
        }
        #expect(error?.code == .authenticationFailed)
        // 150 and 321 fail in different workers' slices: the lowest index is reported.
        #expect(error?.itemIndex == 150)
    }

    @Test func smallBatchRunsSequentially() throws {
        let oldKey = SecretKey()
        let newKey = SecretKey()
        let records = try Self.records(3, key: oldKey, version: 1)
        let requests = records.map {
            AESGCM.ResealRequest(
                box: $0.box,
                oldAssociatedData: RecordAssociatedData.make(recordID: $0.id, fmkVersion: 1),
                newAssociatedData: []
            )
        }
        let resealed = try AESGCM.reseal(requests, from: oldKey, to: newKey)
        #expect(try resealed.map { try AESGCM.open($0, using: newKey) } == records.map(\.plaintext))
        #expect(try AESGCM.reseal([], from: oldKey, to: newKey).isEmpty)
    }
}
