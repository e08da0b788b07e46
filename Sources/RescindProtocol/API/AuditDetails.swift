import Foundation
import RescindMacros

/// The plaintext inside an entry's `encrypted_details`: what the owner's client shows
/// (the guide's "Settings > Access Log"). Fields absent for a kind are omitted.
@MemberwiseInit
public struct AuditDetails: Codable, Sendable, Equatable {
    /// A device named in a revocation, and (for completion) how it answered.
    @MemberwiseInit
    public struct Device: Codable, Sendable, Equatable {
        public var deviceID: UUID
        public var userID: UUID
        public var action: DeviceAction
        public var state: String? = nil
        public var ackedAt: Date? = nil
        public var recordsProcessed: Int? = nil
    }

    public var eventType: String
    public var eventID: UUID
    public var familyMemberID: UUID
    public var actorUserID: UUID
    public var targetUserID: UUID?
    public var fmkVersion: Int? = nil
    public var reason: String? = nil
    public var recordsReEncrypted: Int? = nil
    /// Devices told to rotate or erase (`access_revoked`), or their answers (completion, overdue, failure).
    public var devicesAffected: [Device]? = nil
    /// Client-side re-encryption time reported with the revocation.
    public var durationMs: Int? = nil
    public var commitToLastAckMs: Int? = nil
    public var error: String? = nil
    /// Kind-specific facts from the grant service (e.g. `previous_owner_user_id`).
    public var facts: [String: String]? = nil
    /// What a client reported refusing (`key_chain_violation` entries).
    public var violation: KeyChainViolation? = nil
}
