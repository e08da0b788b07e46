import Foundation
import RescindCrypto
import RescindProtocol

/// A family member with an owner (who holds the X25519 key audit details are sealed
/// to) and devices with their own signing keys, to build signed test traffic from.
struct TestFamily: Sendable {
    struct Device: Sendable {
        let id: UUID
        let userID: UUID
        let key: Ed25519.PrivateKey

        /// Pass an id and key drawn from a seed to make a reproducible device.
        init(userID: UUID, id: UUID = UUID(), key: Ed25519.PrivateKey = Ed25519.PrivateKey()) {
            self.id = id
            self.userID = userID
            self.key = key
        }
    }

    let familyMemberID: UUID
    let ownerUserID: UUID
    let ownerKey = X25519.PrivateKey()

    /// Pass an existing id for the family member's next owner (ownership transfer), and a
    /// real user's id when the owner signs in with a grant-service token.
    init(familyMemberID: UUID = UUID(), ownerUserID: UUID = UUID()) {
        self.familyMemberID = familyMemberID
        self.ownerUserID = ownerUserID
    }

    var ownerPublicKey: Data { Data(ownerKey.publicKey.rawRepresentation) }

    func accessEvent(
        _ kind: AccessEvent.Kind, target: UUID? = nil, details: [String: String] = [:], at date: Date = Date()
    ) -> AccessEvent {
        AccessEvent(
            eventID: UUID(), kind: kind, familyMemberID: familyMemberID, ownerUserID: ownerUserID,
            ownerAgreementPublicKey: ownerPublicKey, actorUserID: ownerUserID, targetUserID: target, fmkVersion: 1,
            details: details, occurredAt: Timestamp.truncated(date))
    }

    /// Revokes `revoked`: their devices erase, everyone else's rotate.
    func revocation(
        of revoked: UUID, devices: [Device], version: Int = 2, at date: Date = Date(), records: Int = 500,
        eventID: UUID = UUID()
    ) -> RevocationEvent {
        RevocationEvent(
            eventID: eventID, familyMemberID: familyMemberID, ownerUserID: ownerUserID,
            ownerAgreementPublicKey: ownerPublicKey, revokedUserID: revoked, revokedByUserID: ownerUserID,
            newFMKVersion: version, recordsReencrypted: records, reason: "custody change", clientDurationMs: 523,
            occurredAt: Timestamp.truncated(date),
            expectedDevices: devices.map {
                RevocationEvent.ExpectedDevice(
                    deviceID: $0.id, userID: $0.userID, action: $0.userID == revoked ? .secureDeletion : .fmkRotation,
                    signingPublicKey: Data($0.key.publicKey.rawRepresentation))
            })
    }

    static func ack(
        _ device: Device, for event: RevocationEvent, outcome: DeviceAck.Outcome = .applied, error: String? = nil
    ) -> DeviceAck {
        let action = event.expectedDevices.first { $0.deviceID == device.id }?.action ?? .fmkRotation
        return DeviceAck(
            ackID: UUID(), commandID: UUID(), eventID: event.eventID, deviceID: device.id, action: action,
            outcome: outcome, recordsProcessed: 500, fmkVersion: action == .secureDeletion ? 0 : event.newFMKVersion,
            durationMs: 80, error: error, ackedAt: Timestamp.truncated(Date()))
    }
}
