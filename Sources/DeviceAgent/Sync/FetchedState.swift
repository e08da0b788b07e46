import Foundation
import RescindProtocol

/// A family member's records at a new FMK version, downloaded and verified, ready to
/// replace the cache in one transaction.
struct RotationResult: Sendable {
    var familyMemberID: UUID
    var fmkVersion: Int
    /// The new FMK wrapped under this device's storage key.
    var wrappedFMK: Data
    /// Every current record, all under `fmkVersion` and all shown to decrypt.
    var records: [RecordResponse]
    var cursor: Int64
    /// Seals the records when at-rest encryption is on (set by whoever holds the keys).
    var atRest: AtRestLayer? = nil
}

/// Changes after the cursor at the version already held, verified.
struct IncrementalResult: Sendable {
    var familyMemberID: UUID
    var fmkVersion: Int
    var records: [RecordResponse]
    var deletedRecordIDs: [UUID]
    var cursor: Int64
    var atRest: AtRestLayer? = nil
}
