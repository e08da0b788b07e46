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
    var records: RotatedRecords
    var cursor: Int64
    /// Seals the records when at-rest encryption is on (set by whoever holds the keys).
    var atRest: AtRestLayer? = nil
}

/// Where a rotation's verified records wait for the swap.
enum RotatedRecords: Sendable {
    /// One page's worth: held in memory.
    case inMemory([RecordResponse])
    /// More than one page: written page by page to the store's incoming table (under
    /// `download`) as each page verified, so a rotation of any size holds at most one page
    /// in memory. `count` is what the download kept, checked again at the swap.
    case staged(download: UUID, count: Int)

    var count: Int {
        switch self {
        case .inMemory(let records): records.count
        case .staged(_, let count): count
        }
    }
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
