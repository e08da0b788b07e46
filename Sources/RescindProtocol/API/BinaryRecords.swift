import Foundation

/// The binary form of the two bulk record bodies: a revocation's upload batch and a page
/// of the change feed.
///
/// JSON carries a 2 KiB record as ~2.8 KiB of base64 that both ends must encode, scan
/// and decode; at 10,000 records that was most of a revocation's client and server CPU
/// (docs/benchmarks.md). This form is the record bytes plus fixed-width framing, so both
/// ends do little more than copy. JSON stays the default: a client opts in with
/// `Content-Type` (upload) or `Accept` (change feed) set to `mediaType`.
///
/// Layout (integers big-endian, ids as their 16 bytes):
/// - header: `"RREC"`, format version (1 byte, 2), kind (1 byte: 1 upload batch, 2 page)
/// - a sealed record: its length (u32, ciphertext + 28), then nonce (12) ‖ ciphertext ‖
///   tag (16) — the bytes AES-GCM sealing produces, so a client seals straight into the body
/// - upload batch: record count (u32), then per record: id, source change seq (i64: the
///   change sequence of the ciphertext that was re-encrypted), sealed record
///
/// Version 2 added the source change seq of uploaded records (version 1 had none, and a
/// revocation could overwrite an edit made while it ran).
/// - page: next cursor (i64), has more (u8), current FMK version (u32), record count
///   (u32), deleted count (u32), then per record: id, FMK version (u32), change seq
///   (i64), sealed record; then the deleted ids
public enum BinaryRecords {
    public static let mediaType = "application/vnd.rescind.records"

    /// Why a body is not a well-formed binary record body (never echoes its bytes).
    public struct FormatError: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String
    }

    static let magic: [UInt8] = Array("RREC".utf8)
    static let formatVersion: UInt8 = 2
    static let nonceBytes = 12
    static let tagBytes = 16
    /// Nonce and tag around the ciphertext of a sealed record.
    public static let sealedOverhead = nonceBytes + tagBytes
    /// The bytes an upload batch spends on each record besides its ciphertext: id (16),
    /// source change seq (8), sealed length (4), nonce and tag.
    public static let uploadOverhead = 16 + 8 + 4 + sealedOverhead

    enum Kind: UInt8 {
        case uploadBatch = 1
        case page = 2
    }

    // MARK: Upload batch

    public static func encode(_ batch: UploadBatchRequest) -> Data {
        var writer = Writer(capacity: 10 + batch.records.reduce(0) { $0 + uploadOverhead + $1.ciphertext.count })
        writer.header(.uploadBatch)
        writer.u32(batch.records.count)
        for record in batch.records {
            writer.uuid(record.recordID)
            writer.i64(record.sourceChangeSeq)
            writer.sealed(nonce: record.nonce, ciphertext: record.ciphertext, tag: record.tag)
        }
        return writer.data
    }

    /// - Throws: `FormatError` for anything but exactly one well-formed upload batch.
    public static func decodeUploadBatch(_ body: Data) throws -> UploadBatchRequest {
        var reader = Reader(body)
        try reader.header(.uploadBatch)
        let count = try reader.count(minimumBytesEach: uploadOverhead)
        var records: [StagedRecord] = []
        records.reserveCapacity(count)
        for _ in 0..<count {
            let id = try reader.uuid()
            let source = try reader.i64()
            guard source >= 0 else { throw FormatError(description: "a source change seq is negative") }
            let (nonce, ciphertext, tag) = try reader.sealed()
            records.append(StagedRecord(recordID: id, sourceChangeSeq: source, nonce: nonce, ciphertext: ciphertext, tag: tag))
        }
        try reader.end()
        return UploadBatchRequest(records: records)
    }

    /// An upload batch body built record by record, each record sealed straight into it
    /// (no per-record buffers): what a revocation's client uploads.
    public struct UploadBatchWriter: Sendable {
        public private(set) var body: [UInt8]
        public private(set) var count = 0
        private let countOffset: Int

        /// - Parameter capacity: bytes to reserve (10 + per record `uploadOverhead` + ciphertext).
        public init(capacity: Int = 0) {
            var writer = Writer(capacity: 10)
            writer.header(.uploadBatch)
            body = [UInt8](writer.data)
            countOffset = body.count
            body += [0, 0, 0, 0]
            body.reserveCapacity(capacity)
        }

        /// Appends one record; `seal` must append exactly its `nonce ‖ ciphertext ‖ tag`
        /// (`sealedByteCount` bytes) to the buffer it is given.
        public mutating func append(
            recordID: UUID, sourceChangeSeq: Int64, sealedByteCount: Int, seal: (inout [UInt8]) throws -> Void
        ) throws {
            let start = body.count
            withUnsafeBytes(of: recordID.uuid) { body.append(contentsOf: $0) }
            withUnsafeBytes(of: sourceChangeSeq.bigEndian) { body.append(contentsOf: $0) }
            withUnsafeBytes(of: UInt32(sealedByteCount).bigEndian) { body.append(contentsOf: $0) }
            do {
                try seal(&body)
            } catch {
                body.removeSubrange(start...)
                throw error
            }
            guard body.count - start == 28 + sealedByteCount else {
                body.removeSubrange(start...)
                throw FormatError(description: "a sealed record was not the \(sealedByteCount) bytes announced")
            }
            count += 1
            // Four stores in place (the record count at the head of the body).
            withUnsafeBytes(of: UInt32(count).bigEndian) { bytes in
                for index in 0..<4 { body[countOffset + index] = bytes[index] }
            }
        }
    }

    // MARK: Change-feed page

    public static func encode(_ page: RecordPage) -> Data {
        var writer = Writer(
            capacity: 27 + page.deletedRecordIDs.count * 16 + page.records.reduce(0) { $0 + 60 + $1.ciphertext.count })
        writer.header(.page)
        writer.i64(page.nextCursor)
        writer.bytes([page.hasMore ? 1 : 0])
        writer.u32(page.currentFMKVersion)
        writer.u32(page.records.count)
        writer.u32(page.deletedRecordIDs.count)
        for record in page.records {
            writer.uuid(record.recordID)
            writer.u32(record.fmkVersion)
            writer.i64(record.changeSeq)
            writer.sealed(nonce: record.nonce, ciphertext: record.ciphertext, tag: record.tag)
        }
        for id in page.deletedRecordIDs { writer.uuid(id) }
        return writer.data
    }

    /// - Parameter familyMemberID: the page's family member (the request names it; the body does not).
    /// - Throws: `FormatError` for anything but exactly one well-formed page.
    public static func decodePage(_ body: Data, familyMemberID: UUID) throws -> RecordPage {
        var reader = Reader(body)
        try reader.header(.page)
        let cursor = try reader.i64()
        let hasMore = try reader.u8()
        guard hasMore <= 1 else { throw FormatError(description: "has-more flag is neither 0 nor 1") }
        let version = try reader.u32()
        let recordCount = try reader.count(minimumBytesEach: 60)
        let deletedCount = try reader.count(minimumBytesEach: 16)
        var page = RecordPage(
            records: [], deletedRecordIDs: [], nextCursor: cursor, hasMore: hasMore == 1, currentFMKVersion: version)
        page.records.reserveCapacity(recordCount)
        for _ in 0..<recordCount {
            let id = try reader.uuid()
            let fmkVersion = try reader.u32()
            let changeSeq = try reader.i64()
            let (nonce, ciphertext, tag) = try reader.sealed()
            page.records.append(
                RecordResponse(
                    recordID: id, familyMemberID: familyMemberID, fmkVersion: fmkVersion, nonce: nonce,
                    ciphertext: ciphertext, tag: tag, changeSeq: changeSeq))
        }
        page.deletedRecordIDs = try (0..<deletedCount).map { _ in try reader.uuid() }
        try reader.end()
        return page
    }
}

extension BinaryRecords {
    struct Writer {
        private(set) var data: Data

        init(capacity: Int) {
            data = Data(capacity: capacity)
        }

        mutating func header(_ kind: Kind) {
            data.append(contentsOf: magic)
            data.append(contentsOf: [formatVersion, kind.rawValue])
        }

        mutating func bytes(_ bytes: some Collection<UInt8>) { data.append(contentsOf: bytes) }

        /// Counts, lengths and versions; the API never produces one beyond 32 bits.
        mutating func u32(_ value: Int) {
            precondition((0...Int(UInt32.max)).contains(value), "\(value) does not fit the binary record format")
            withUnsafeBytes(of: UInt32(value).bigEndian) { data.append(contentsOf: $0) }
        }

        mutating func i64(_ value: Int64) {
            withUnsafeBytes(of: value.bigEndian) { data.append(contentsOf: $0) }
        }

        mutating func uuid(_ id: UUID) {
            withUnsafeBytes(of: id.uuid) { data.append(contentsOf: $0) }
        }

        /// Nonce and tag are fixed-width: a wrong length here is a caller's bug, which the
        /// decoder on the other side would otherwise report as a malformed body.
        mutating func sealed(nonce: Data, ciphertext: Data, tag: Data) {
            precondition(nonce.count == nonceBytes && tag.count == tagBytes, "a sealed record has a 12-byte nonce and a 16-byte tag")
            u32(sealedOverhead + ciphertext.count)
            data.append(nonce)
            data.append(ciphertext)
            data.append(tag)
        }
    }

    struct Reader {
        private let body: Data
        private var offset: Int

        init(_ body: Data) {
            self.body = body
            offset = body.startIndex
        }

        private var remaining: Int { body.endIndex - offset }

        mutating func take(_ count: Int) throws -> Data {
            guard count <= remaining else {
                throw FormatError(description: "the body ends early (\(count) byte(s) expected, \(remaining) left)")
            }
            defer { offset += count }
            return Data(body[offset..<offset + count])
        }

        private mutating func integer<T: FixedWidthInteger>(_: T.Type) throws -> T {
            guard MemoryLayout<T>.size <= remaining else {
                throw FormatError(description: "the body ends early (\(MemoryLayout<T>.size) byte(s) expected, \(remaining) left)")
            }
            var value: T = 0
            for byte in body[offset..<offset + MemoryLayout<T>.size] { value = value << 8 | T(byte) }
            offset += MemoryLayout<T>.size
            return value
        }

        mutating func header(_ kind: Kind) throws {
            guard remaining >= 6, Array(body[offset..<offset + 4]) == magic else {
                throw FormatError(description: "not a binary record body")
            }
            offset += 4
            let version = try u8()
            guard version == formatVersion else { throw FormatError(description: "unsupported format version \(version)") }
            let found = try u8()
            guard found == kind.rawValue else {
                throw FormatError(description: "expected a \(kind == .page ? "page" : "upload batch"), found kind \(found)")
            }
        }

        mutating func u8() throws -> UInt8 { try integer(UInt8.self) }
        mutating func u32() throws -> Int { Int(try integer(UInt32.self)) }
        mutating func i64() throws -> Int64 { try integer(Int64.self) }

        /// A count whose items cannot fit in what is left is refused before anything is reserved.
        mutating func count(minimumBytesEach: Int) throws -> Int {
            let count = try u32()
            guard count <= remaining / minimumBytesEach else {
                throw FormatError(description: "\(count) item(s) announced, the body is too short for them")
            }
            return count
        }

        mutating func uuid() throws -> UUID {
            let bytes = try take(16)
            var raw: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &raw) { $0.copyBytes(from: bytes) }
            return UUID(uuid: raw)
        }

        mutating func sealed() throws -> (nonce: Data, ciphertext: Data, tag: Data) {
            let length = try u32()
            guard length >= sealedOverhead else {
                throw FormatError(description: "a sealed record of \(length) byte(s) is shorter than its nonce and tag")
            }
            guard length <= remaining else {
                throw FormatError(description: "the body ends early (\(length) byte(s) expected, \(remaining) left)")
            }
            let nonce = try take(nonceBytes)
            let ciphertext = try take(length - sealedOverhead)
            return (nonce, ciphertext, try take(tagBytes))
        }

        func end() throws {
            guard remaining == 0 else { throw FormatError(description: "\(remaining) byte(s) after the last item") }
        }
    }
}
