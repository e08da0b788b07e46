import Foundation
import RescindProtocol

/// What to do with a verified command, given what this device holds. Pure: the same
/// inputs always give the same answer, so redelivery and races converge.
///
/// Versions only go up: a command whose version the device already holds, or has already
/// moved past (its floor), changes nothing and is acknowledged `already_applied`.
enum CommandDecision: Equatable, Sendable {
    /// Fetch and install at least this FMK version.
    case rotate(minimum: Int)
    /// Erase; afterwards accept nothing below `floor`.
    case erase(floor: Int)
    case alreadyApplied(reason: String)

    static func decide(_ command: DeviceCommand, local: FamilyMemberState?) -> CommandDecision {
        let version = command.newFMKVersion
        switch command.action {
        case .fmkRotation:
            guard let local else { return .rotate(minimum: version) }
            if local.status == .active, local.fmkVersion >= version {
                return .alreadyApplied(reason: "holds FMK v\(local.fmkVersion)")
            }
            if local.versionFloor >= version {
                return .alreadyApplied(reason: "already past FMK v\(version) (floor v\(local.versionFloor))")
            }
            return .rotate(minimum: version)
        case .secureDeletion:
            guard let local else { return .erase(floor: version) }
            if local.status == .revoked, local.versionFloor >= version {
                return .alreadyApplied(reason: "already erased")
            }
            // Holding this version or a newer one means access was granted again after the
            // revocation this command announced: the command is stale.
            if local.status == .active, local.fmkVersion >= version {
                return .alreadyApplied(reason: "holds FMK v\(local.fmkVersion), granted after this revocation")
            }
            return .erase(floor: version)
        }
    }
}
