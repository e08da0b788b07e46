import Foundation
import RescindMacros

/// Every access change other than a revocation, on `access_events`, so that the
/// audit log downstream is complete.
@MemberwiseInit
public struct AccessEvent: Codable, Sendable, Equatable {
    public static let schema = "rescind.access_event.v1"

    public enum Kind: String, Codable, Sendable, CaseIterable {
        case familyMemberCreated = "family_member_created"
        case accessGranted = "access_granted"
        case accessRegranted = "access_regranted"
        case ownershipTransferred = "ownership_transferred"
        case revokedGrantsPurged = "revoked_grants_purged"
    }

    public var eventID: UUID
    public var kind: Kind
    public var familyMemberID: UUID
    public var ownerUserID: UUID
    /// Audit details are sealed to this key (the owner's after the change).
    public var ownerAgreementPublicKey: Data
    public var actorUserID: UUID
    public var targetUserID: UUID?
    public var fmkVersion: Int
    /// Kind-specific facts (e.g. `previous_owner_user_id`, `grants_purged`); never key material.
    public var details: [String: String]
    public var occurredAt: Date
}
