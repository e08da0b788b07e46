import Foundation

/// One change to the cache, applied in a single transaction.
enum LocalChange: Sendable {
    /// Replace every record of the family member and its FMK with a verified new version.
    case rotate(RotationResult)
    /// Add/replace/delete records at the version already held.
    case incremental(IncrementalResult)
    /// Cryptographic erasure: records sealed under an ephemeral key, the FMK destroyed, the
    /// family member marked revoked with `floor` as the lowest version it will accept again.
    case erase(UUID, floor: Int)
    /// Change nothing (an ack for a command that needs no action).
    case nothing(UUID)

    /// Whether this is an erasure (it commits on the rollback journal: `AgentStore.write(erasing:)`).
    var erases: Bool {
        if case .erase = self { return true }
        return false
    }

    var familyMemberID: UUID {
        switch self {
        case .rotate(let result): result.familyMemberID
        case .incremental(let result): result.familyMemberID
        case .erase(let id, _), .nothing(let id): id
        }
    }
}

/// What a change did.
struct ChangeEffect: Sendable, Equatable {
    /// `false` when the cache already was in the target state (idempotent re-apply).
    var changed: Bool
    var recordsProcessed: Int
    /// The FMK version held afterwards (0 when none).
    var fmkVersion: Int
}
