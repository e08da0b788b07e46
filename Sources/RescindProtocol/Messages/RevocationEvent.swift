import Foundation
import RescindMacros

/// One committed revocation, as the grant service announces it on `revocation_events`.
///
/// It names every device expected to act, with the device's signing key, so that
/// the audit service can verify acknowledgements without asking the grant service.
@MemberwiseInit
public struct RevocationEvent: Codable, Sendable, Equatable {
    public static let schema = "rescind.revocation_event.v1"

    /// A device that must rotate or erase, and the key its acknowledgement will be signed with.
    @MemberwiseInit
    public struct ExpectedDevice: Codable, Sendable, Equatable {
        public var deviceID: UUID
        public var userID: UUID
        public var action: DeviceAction
        public var signingPublicKey: Data
    }

    public var eventID: UUID
    public var familyMemberID: UUID
    public var ownerUserID: UUID
    /// The owner's X25519 key: audit details are sealed to it, so only the owner reads them.
    public var ownerAgreementPublicKey: Data
    /// Nil for a rotation that revokes nobody (`POST /v1/family-members/{id}/rotations`): every
    /// expected device rotates.
    public var revokedUserID: UUID?
    public var revokedByUserID: UUID
    public var newFMKVersion: Int
    public var recordsReencrypted: Int
    public var reason: String?
    /// Client-side time spent re-encrypting and uploading, when the client reported it.
    public var clientDurationMs: Int?
    public var occurredAt: Date
    public var expectedDevices: [ExpectedDevice]
}
