import Foundation
import Testing

@testable import RescindProtocol

@Suite struct BinaryRecordsTests {
    static func staged(_ ciphertextBytes: Int, seed: UInt8) -> StagedRecord {
        StagedRecord(
            recordID: UUID(), sourceChangeSeq: Int64(seed) * 1_000_003, nonce: Data(repeating: seed, count: 12),
            ciphertext: Data((0..<ciphertextBytes).map { UInt8(truncatingIfNeeded: $0 &+ Int(seed)) }),
            tag: Data(repeating: seed &+ 1, count: 16))
    }

    static let page = RecordPage(
        records: [
            RecordResponse(
                recordID: UUID(), familyMemberID: familyMemberID, fmkVersion: 3, nonce: Data(repeating: 7, count: 12),
                ciphertext: Data(repeating: 9, count: 2048), tag: Data(repeating: 8, count: 16), changeSeq: 41),
            RecordResponse(
                recordID: UUID(), familyMemberID: familyMemberID, fmkVersion: 3, nonce: Data(repeating: 1, count: 12),
                ciphertext: Data(), tag: Data(repeating: 2, count: 16), changeSeq: Int64.max),
        ],
        deletedRecordIDs: [UUID(), UUID()], nextCursor: Int64.max, hasMore: true, currentFMKVersion: 3)
    static let familyMemberID = UUID()

    @Test func uploadBatchesRoundTrip() throws {
        for batch in [
            UploadBatchRequest(records: []),
            UploadBatchRequest(records: [Self.staged(0, seed: 1)]),
            UploadBatchRequest(records: (0..<500).map { Self.staged(2048, seed: UInt8($0 % 256)) }),
        ] {
            #expect(try BinaryRecords.decodeUploadBatch(BinaryRecords.encode(batch)) == batch)
        }
    }

    @Test func pagesRoundTripAndTakeTheFamilyMemberFromTheRequest() throws {
        let encoded = BinaryRecords.encode(Self.page)
        #expect(try BinaryRecords.decodePage(encoded, familyMemberID: Self.familyMemberID) == Self.page)
        let empty = RecordPage(records: [], deletedRecordIDs: [], nextCursor: 0, hasMore: false, currentFMKVersion: 1)
        #expect(try BinaryRecords.decodePage(BinaryRecords.encode(empty), familyMemberID: UUID()) == empty)
    }

    /// The framing costs a fixed 56 bytes per staged record: no base64, no field names.
    @Test func theBodyIsTheRecordBytesPlusFixedFraming() {
        let batch = UploadBatchRequest(records: (0..<10).map { Self.staged(2048, seed: UInt8($0)) })
        #expect(BinaryRecords.uploadOverhead == 56)
        #expect(BinaryRecords.encode(batch).count == 10 + 10 * (56 + 2048))
    }

    /// A negative source change seq cannot come from the service's change feed: refused.
    @Test func aNegativeSourceChangeSeqIsRefused() throws {
        var body = BinaryRecords.encode(UploadBatchRequest(records: [Self.staged(8, seed: 2)]))
        body[body.startIndex + 10 + 16] = 0x80
        #expect(throws: BinaryRecords.FormatError.self) { try BinaryRecords.decodeUploadBatch(body) }
    }

    @Test func everyTruncationFailsClosed() throws {
        let upload = BinaryRecords.encode(UploadBatchRequest(records: [Self.staged(64, seed: 3), Self.staged(0, seed: 4)]))
        for length in 0..<upload.count {
            #expect(throws: BinaryRecords.FormatError.self) { try BinaryRecords.decodeUploadBatch(upload.prefix(length)) }
        }
        let page = BinaryRecords.encode(Self.page)
        for length in stride(from: 0, to: page.count, by: 7) {
            #expect(throws: BinaryRecords.FormatError.self) {
                try BinaryRecords.decodePage(page.prefix(length), familyMemberID: Self.familyMemberID)
            }
        }
    }

    @Test func trailingBytesWrongHeadersAndAbsurdCountsAreRefused() throws {
        let upload = BinaryRecords.encode(UploadBatchRequest(records: [Self.staged(16, seed: 5)]))
        func refused(_ body: Data, sourceLocation: SourceLocation = #_sourceLocation) {
            #expect(throws: BinaryRecords.FormatError.self, sourceLocation: sourceLocation) {
                try BinaryRecords.decodeUploadBatch(body)
            }
        }
        refused(upload + [0])
        refused(Data("{\"records\":[]}".utf8))
        // Version 1 (no source change seqs) and unknown versions.
        for version: UInt8 in [1, 3] {
            var wrongVersion = upload
            wrongVersion[4] = version
            refused(wrongVersion)
        }
        // A page is not an upload batch, and the other way round.
        refused(BinaryRecords.encode(Self.page))
        #expect(throws: BinaryRecords.FormatError.self) {
            try BinaryRecords.decodePage(upload, familyMemberID: Self.familyMemberID)
        }
        // 4 billion records announced in a 10-byte body: refused before anything is reserved.
        refused(Data("RREC".utf8) + [2, 1, 0xFF, 0xFF, 0xFF, 0xFF])
        // A sealed length running past the end, or too short for a nonce and a tag.
        var longCiphertext = upload
        longCiphertext.replaceSubrange(34..<38, with: [0x7F, 0xFF, 0xFF, 0xFF])
        refused(longCiphertext)
        var shortSealed = upload
        shortSealed.replaceSubrange(34..<38, with: [0, 0, 0, 27])
        refused(shortSealed)
        var badFlag = BinaryRecords.encode(Self.page)
        badFlag[14] = 2
        #expect(throws: BinaryRecords.FormatError.self) {
            try BinaryRecords.decodePage(badFlag, familyMemberID: Self.familyMemberID)
        }
    }

    /// Decoding works on a slice whose indices do not start at zero (a body cut from a larger buffer).
    @Test func decodesSlicesOfLargerBuffers() throws {
        let batch = UploadBatchRequest(records: [Self.staged(100, seed: 6)])
        let framed = Data([0xAA, 0xBB]) + BinaryRecords.encode(batch)
        #expect(try BinaryRecords.decodeUploadBatch(framed.dropFirst(2)) == batch)
    }

    /// The writer's body is what `encode` makes of the same records, sealed in place.
    @Test func theUploadWriterBuildsTheSameBody() throws {
        let records = (0..<3).map { Self.staged(100 + $0, seed: UInt8($0)) }
        var writer = BinaryRecords.UploadBatchWriter()
        for record in records {
            try writer.append(
                recordID: record.recordID, sourceChangeSeq: record.sourceChangeSeq, sealedByteCount: 28 + record.ciphertext.count
            ) { body in
                body += record.nonce
                body += record.ciphertext
                body += record.tag
            }
        }
        #expect(writer.count == 3)
        #expect(Data(writer.body) == BinaryRecords.encode(UploadBatchRequest(records: records)))
        // A sealing step that appends the wrong number of bytes is refused and leaves the body as it was.
        let before = writer.body
        #expect(throws: BinaryRecords.FormatError.self) {
            try writer.append(recordID: UUID(), sourceChangeSeq: 1, sealedByteCount: 40) { $0 += [1, 2, 3] }
        }
        #expect(writer.body == before && writer.count == 3)
    }
}
