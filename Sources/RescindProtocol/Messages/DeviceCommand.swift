import Foundation
import RescindMacros

/// An instruction to one device after a revocation, on `device_commands`.
///
/// Agents act only on commands signed by the pinned grant-service key and
/// addressed to themselves, and never move to an FMK version below the one they hold.
@MemberwiseInit
public struct DeviceCommand: Codable, Sendable, Equatable {
    public static let schema = "rescind.device_command.v1"

    public var commandID: UUID
    public var eventID: UUID
    public var deviceID: UUID
    public var action: DeviceAction
    public var familyMemberID: UUID
    public var newFMKVersion: Int
    public var issuedAt: Date

    enum CodingKeys: String, CodingKey {
        case commandID, eventID, deviceID, action = "type", familyMemberID, newFMKVersion, issuedAt
    }
}
