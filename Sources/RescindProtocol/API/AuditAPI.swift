import Foundation
import RescindMacros

/// One entry of a family member's access log, as the audit service stores it.
///
/// `encryptedDetails` is a sealed box (`crypto_box_seal`) to the owner's X25519 key at
/// the time of the entry: open it with `AnonymousSealedBox.open` and decode `AuditDetails`.
/// The hashes and signature let a client re-verify the chain itself.
@MemberwiseInit
public struct AccessLogEntry: Codable, Sendable, Equatable {
    public var logID: UUID
    public var familyMemberID: UUID
    /// Position in the family member's chain, from 1.
    public var seq: Int64
    /// `family_member_created`, `access_granted`, `access_regranted`, `ownership_transferred`,
    /// `revoked_grants_purged`, `access_revoked`, `fmk_rotated` (a rotation that revoked nobody), `revocation_completed`, `ack_failed`, `ack_overdue`,
    /// `key_chain_violation`.
    public var eventType: String
    public var actorUserID: UUID
    public var targetUserID: UUID?
    public var encryptedDetails: Data
    public var occurredAt: Date
    /// The event (or ack, or report) the entry records; covered by the entry hash.
    public var sourceID: UUID
    public var prevHash: Data
    public var entryHash: Data
    /// The audit service's Ed25519 signature over the entry hash.
    public var signature: Data
}

/// A family member's chain head as the audit service last signed it: a reader who checks
/// the entries against it also detects entries cut off the end of the log.
@MemberwiseInit
public struct AccessLogHead: Codable, Sendable, Equatable {
    public var familyMemberID: UUID
    /// The last entry's seq (0: no entry yet).
    public var seq: Int64
    /// The last entry's hash (the genesis hash, 32 zero bytes, for an empty chain).
    public var hash: Data
    /// The audit service's Ed25519 signature over `AuditChain.headSigningInput`.
    public var signature: Data
}

/// A page of the access log, newest first; pass `nextBefore` as `before` for the next page.
@MemberwiseInit
public struct AccessLogPage: Codable, Sendable, Equatable {
    public var entries: [AccessLogEntry]
    public var nextBefore: Int64?
}

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

/// The result of re-checking a family member's audit chain.
@MemberwiseInit
public struct ChainVerificationReport: Codable, Sendable, Equatable {
    /// One inconsistency, located at the entry where it shows.
    @MemberwiseInit
    public struct Problem: Codable, Sendable, Equatable {
        /// `altered` (content does not match its hash), `bad_signature`, `broken_link`
        /// (previous hash differs: an entry was removed, inserted or reordered before it),
        /// `missing_entries` (sequence gap), `truncated` (entries after the last one are gone).
        public var code: String
        public var seq: Int64
        public var logID: UUID?
        public var message: String
    }

    public var familyMemberID: UUID
    public var valid: Bool
    public var entries: Int
    /// Hash of the last entry: a client that remembers it detects a later truncation too.
    public var headHash: Data?
    public var problems: [Problem]
}

/// A revocation as the audit service tracks it: who must still act, and how each device answered.
@MemberwiseInit
public struct RevocationStatus: Codable, Sendable, Equatable {
    /// One step of a device's command lifecycle.
    @MemberwiseInit
    public struct Step: Codable, Sendable, Equatable {
        /// `issued`, `delivered`, `not_now`, `applied`, `already_applied`, `healed`, `failed`,
        /// `overdue`, `reissued` or `expired`.
        public var state: String
        public var at: Date
        /// The command the step concerns (a re-issue has its own id).
        public var commandID: UUID? = nil
        /// 1 for the grant service's command, then one more per re-issue.
        public var attempt: Int? = nil
        public var error: String? = nil
    }

    @MemberwiseInit
    public struct Device: Codable, Sendable, Equatable {
        public var deviceID: UUID
        public var userID: UUID
        public var action: DeviceAction
        /// Where the device's command stands (`DeviceAckState` in the audit service):
        /// `pending` (issued, nothing heard yet), `delivered`, `not_now`, `reissued`, `overdue`
        /// (the deadline passed with no answer), then `applied`, `already_applied`, `healed`
        /// (done), `failed` or `expired` (attempts exhausted).
        public var state: String
        public var ackedAt: Date?
        public var late: Bool
        public var error: String?
        /// Commands sent to the device for this revocation so far (1 + re-issues).
        public var attempts: Int? = nil
        /// The lifecycle, oldest first: issued, every receipt and answer, overdue, re-issues.
        public var history: [Step]? = nil
    }

    public var eventID: UUID
    public var familyMemberID: UUID
    /// Nil for a rotation that revoked nobody.
    public var revokedUserID: UUID?
    public var revokedByUserID: UUID
    public var newFMKVersion: Int
    public var recordsReencrypted: Int
    public var committedAt: Date
    public var deadlineAt: Date
    public var completedAt: Date?
    public var commitToLastAckMs: Int?
    public var devices: [Device]
}

/// Recent revocations, newest first.
@MemberwiseInit
public struct RevocationStatusList: Codable, Sendable, Equatable {
    public var revocations: [RevocationStatus]
    /// The event-stream position this snapshot reflects: open the stream after it.
    public var streamPosition: Int64
    /// How many expected devices of the listed revocations are in each lifecycle state.
    public var deviceStates: [String: Int]? = nil
}
