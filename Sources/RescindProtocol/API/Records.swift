import Foundation
import RescindMacros

/// A record encrypted under the current FMK with the record id and version as associated data.
@MemberwiseInit
public struct PutRecordRequest: Codable, Sendable, Equatable {
    public var fmkVersion: Int
    public var nonce: Data
    public var ciphertext: Data
    public var tag: Data
}

/// An encrypted record.
@MemberwiseInit
public struct RecordResponse: Codable, Sendable, Equatable {
    public var recordID: UUID
    public var familyMemberID: UUID
    public var fmkVersion: Int
    public var nonce: Data
    public var ciphertext: Data
    public var tag: Data
    public var changeSeq: Int64
}

/// One page of changes after a cursor; pass `nextCursor` as `since` for the next.
@MemberwiseInit
public struct RecordPage: Codable, Sendable, Equatable {
    public var records: [RecordResponse]
    public var deletedRecordIDs: [UUID]
    public var nextCursor: Int64
    public var hasMore: Bool
    public var currentFMKVersion: Int
}
