import Foundation

/// A record encrypted under the current FMK with the record id and version as associated data.
public struct PutRecordRequest: Codable, Sendable, Equatable {
    public var fmkVersion: Int
    public var nonce: Data
    public var ciphertext: Data
    public var tag: Data

    public init(fmkVersion: Int, nonce: Data, ciphertext: Data, tag: Data) {
        self.fmkVersion = fmkVersion
        self.nonce = nonce
        self.ciphertext = ciphertext
        self.tag = tag
    }
}

/// An encrypted record.
public struct RecordResponse: Codable, Sendable, Equatable {
    public var recordID: UUID
    public var familyMemberID: UUID
    public var fmkVersion: Int
    public var nonce: Data
    public var ciphertext: Data
    public var tag: Data
    public var changeSeq: Int64

    public init(recordID: UUID, familyMemberID: UUID, fmkVersion: Int, nonce: Data, ciphertext: Data, tag: Data, changeSeq: Int64) {
        self.recordID = recordID
        self.familyMemberID = familyMemberID
        self.fmkVersion = fmkVersion
        self.nonce = nonce
        self.ciphertext = ciphertext
        self.tag = tag
        self.changeSeq = changeSeq
    }
}

/// One page of changes after a cursor; pass `nextCursor` as `since` for the next.
public struct RecordPage: Codable, Sendable, Equatable {
    public var records: [RecordResponse]
    public var deletedRecordIDs: [UUID]
    public var nextCursor: Int64
    public var hasMore: Bool
    public var currentFMKVersion: Int

    public init(records: [RecordResponse], deletedRecordIDs: [UUID], nextCursor: Int64, hasMore: Bool, currentFMKVersion: Int) {
        self.records = records
        self.deletedRecordIDs = deletedRecordIDs
        self.nextCursor = nextCursor
        self.hasMore = hasMore
        self.currentFMKVersion = currentFMKVersion
    }
}
