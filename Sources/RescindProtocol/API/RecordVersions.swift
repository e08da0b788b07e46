import Foundation
import RescindMacros

/// A record's ciphertext as it was before a device deleted or overwrote it, kept for the
/// restore window and restorable by the family member's owner. Encrypted like a live record
/// (the record id and `fmkVersion` as associated data), and re-encrypted with the live records
/// at every revocation and rotation.
@MemberwiseInit
public struct RecordVersion: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable {
        /// The record was deleted.
        case deleted
        /// A newer ciphertext replaced this one (a write, or a restore of another version).
        case overwritten
    }

    public var versionID: UUID
    public var recordID: UUID
    public var familyMemberID: UUID
    public var kind: Kind
    public var fmkVersion: Int
    public var nonce: Data
    public var ciphertext: Data
    public var tag: Data
    /// When it was deleted or overwritten.
    public var createdAt: Date
    /// Who deleted or overwrote it; the device when known.
    public var byUserID: UUID
    public var byDeviceID: UUID?

    /// The version as the record it was, for `RecordCipher` (its change sequence is not kept).
    public var asRecord: RecordResponse {
        RecordResponse(
            recordID: recordID, familyMemberID: familyMemberID, fmkVersion: fmkVersion, nonce: nonce,
            ciphertext: ciphertext, tag: tag, changeSeq: 0)
    }
}

/// A family member's kept versions (its trash and overwritten records), newest first.
@MemberwiseInit
public struct RecordVersionList: Codable, Sendable, Equatable {
    public var versions: [RecordVersion]
    /// How long a version stays restorable after it was deleted or overwritten, in days.
    public var retentionDays: Int
}

/// Restores one kept version of a record: the latest unless `versionID` names one.
@MemberwiseInit
public struct RestoreRecordRequest: Codable, Sendable, Equatable {
    public var versionID: UUID? = nil
}

/// A kept version re-encrypted under a revocation's or rotation's new FMK.
@MemberwiseInit
public struct StagedRecordVersion: Codable, Sendable, Equatable {
    public var versionID: UUID
    public var nonce: Data
    public var ciphertext: Data
    public var tag: Data
}

/// A batch of re-encrypted versions for a revocation in progress (idempotent per version).
@MemberwiseInit
public struct UploadVersionsRequest: Codable, Sendable, Equatable {
    public var versions: [StagedRecordVersion]
}

/// How many versions the batch staged.
@MemberwiseInit
public struct UploadVersionsResponse: Codable, Sendable, Equatable {
    public var staged: Int
}
