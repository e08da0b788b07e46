import Foundation

/// One entry of a family member's access log, as the audit service stores it.
///
/// `encryptedDetails` is a sealed box (`crypto_box_seal`) to the owner's X25519 key at
/// the time of the entry: open it with `AnonymousSealedBox.open` and decode `AuditDetails`.
/// The hashes and signature let a client re-verify the chain itself.
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

    public init(
        logID: UUID, familyMemberID: UUID, seq: Int64, eventType: String, actorUserID: UUID, targetUserID: UUID?,
        encryptedDetails: Data, occurredAt: Date, sourceID: UUID, prevHash: Data, entryHash: Data, signature: Data
    ) {
        self.logID = logID
        self.familyMemberID = familyMemberID
        self.seq = seq
        self.eventType = eventType
        self.actorUserID = actorUserID
        self.targetUserID = targetUserID
        self.encryptedDetails = encryptedDetails
        self.occurredAt = occurredAt
        self.sourceID = sourceID
        self.prevHash = prevHash
        self.entryHash = entryHash
        self.signature = signature
    }
}

/// A family member's chain head as the audit service last signed it: a reader who checks
/// the entries against it also detects entries cut off the end of the log.
public struct AccessLogHead: Codable, Sendable, Equatable {
    public var familyMemberID: UUID
    /// The last entry's seq (0: no entry yet).
    public var seq: Int64
    /// The last entry's hash (the genesis hash, 32 zero bytes, for an empty chain).
    public var hash: Data
    /// The audit service's Ed25519 signature over `AuditChain.headSigningInput`.
    public var signature: Data

    public init(familyMemberID: UUID, seq: Int64, hash: Data, signature: Data) {
        self.familyMemberID = familyMemberID
        self.seq = seq
        self.hash = hash
        self.signature = signature
    }
}

/// A page of the access log, newest first; pass `nextBefore` as `before` for the next page.
public struct AccessLogPage: Codable, Sendable, Equatable {
    public var entries: [AccessLogEntry]
    public var nextBefore: Int64?

    public init(entries: [AccessLogEntry], nextBefore: Int64?) {
        self.entries = entries
        self.nextBefore = nextBefore
    }
}

/// The plaintext inside an entry's `encrypted_details`: what the owner's client shows
/// (the guide's "Settings > Access Log"). Fields absent for a kind are omitted.
public struct AuditDetails: Codable, Sendable, Equatable {
    /// A device named in a revocation, and (for completion) how it answered.
    public struct Device: Codable, Sendable, Equatable {
        public var deviceID: UUID
        public var userID: UUID
        public var action: DeviceAction
        public var state: String?
        public var ackedAt: Date?
        public var recordsProcessed: Int?

        public init(
            deviceID: UUID, userID: UUID, action: DeviceAction, state: String? = nil, ackedAt: Date? = nil,
            recordsProcessed: Int? = nil
        ) {
            self.deviceID = deviceID
            self.userID = userID
            self.action = action
            self.state = state
            self.ackedAt = ackedAt
            self.recordsProcessed = recordsProcessed
        }
    }

    public var eventType: String
    public var eventID: UUID
    public var familyMemberID: UUID
    public var actorUserID: UUID
    public var targetUserID: UUID?
    public var fmkVersion: Int?
    public var reason: String?
    public var recordsReEncrypted: Int?
    /// Devices told to rotate or erase (`access_revoked`), or their answers (completion, overdue, failure).
    public var devicesAffected: [Device]?
    /// Client-side re-encryption time reported with the revocation.
    public var durationMs: Int?
    public var commitToLastAckMs: Int?
    public var error: String?
    /// Kind-specific facts from the grant service (e.g. `previous_owner_user_id`).
    public var facts: [String: String]?
    /// What a client reported refusing (`key_chain_violation` entries).
    public var violation: KeyChainViolation?

    public init(
        eventType: String, eventID: UUID, familyMemberID: UUID, actorUserID: UUID, targetUserID: UUID?,
        fmkVersion: Int? = nil, reason: String? = nil, recordsReEncrypted: Int? = nil,
        devicesAffected: [Device]? = nil, durationMs: Int? = nil, commitToLastAckMs: Int? = nil,
        error: String? = nil, facts: [String: String]? = nil, violation: KeyChainViolation? = nil
    ) {
        self.eventType = eventType
        self.eventID = eventID
        self.familyMemberID = familyMemberID
        self.actorUserID = actorUserID
        self.targetUserID = targetUserID
        self.fmkVersion = fmkVersion
        self.reason = reason
        self.recordsReEncrypted = recordsReEncrypted
        self.devicesAffected = devicesAffected
        self.durationMs = durationMs
        self.commitToLastAckMs = commitToLastAckMs
        self.error = error
        self.facts = facts
        self.violation = violation
    }
}

/// The result of re-checking a family member's audit chain.
public struct ChainVerificationReport: Codable, Sendable, Equatable {
    /// One inconsistency, located at the entry where it shows.
    public struct Problem: Codable, Sendable, Equatable {
        /// `altered` (content does not match its hash), `bad_signature`, `broken_link`
        /// (previous hash differs: an entry was removed, inserted or reordered before it),
        /// `missing_entries` (sequence gap), `truncated` (entries after the last one are gone).
        public var code: String
        public var seq: Int64
        public var logID: UUID?
        public var message: String

        public init(code: String, seq: Int64, logID: UUID?, message: String) {
            self.code = code
            self.seq = seq
            self.logID = logID
            self.message = message
        }
    }

    public var familyMemberID: UUID
    public var valid: Bool
    public var entries: Int
    /// Hash of the last entry: a client that remembers it detects a later truncation too.
    public var headHash: Data?
    public var problems: [Problem]

    public init(familyMemberID: UUID, valid: Bool, entries: Int, headHash: Data?, problems: [Problem]) {
        self.familyMemberID = familyMemberID
        self.valid = valid
        self.entries = entries
        self.headHash = headHash
        self.problems = problems
    }
}

/// A revocation as the audit service tracks it: who must still act, and how each device answered.
public struct RevocationStatus: Codable, Sendable, Equatable {
    /// One step of a device's command lifecycle.
    public struct Step: Codable, Sendable, Equatable {
        /// `issued`, `delivered`, `not_now`, `applied`, `already_applied`, `healed`, `failed`,
        /// `overdue`, `reissued` or `expired`.
        public var state: String
        public var at: Date
        /// The command the step concerns (a re-issue has its own id).
        public var commandID: UUID?
        /// 1 for the grant service's command, then one more per re-issue.
        public var attempt: Int?
        public var error: String?

        public init(state: String, at: Date, commandID: UUID? = nil, attempt: Int? = nil, error: String? = nil) {
            self.state = state
            self.at = at
            self.commandID = commandID
            self.attempt = attempt
            self.error = error
        }
    }

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
        public var attempts: Int?
        /// The lifecycle, oldest first: issued, every receipt and answer, overdue, re-issues.
        public var history: [Step]?

        public init(
            deviceID: UUID, userID: UUID, action: DeviceAction, state: String, ackedAt: Date?, late: Bool,
            error: String?, attempts: Int? = nil, history: [Step]? = nil
        ) {
            self.deviceID = deviceID
            self.userID = userID
            self.action = action
            self.state = state
            self.ackedAt = ackedAt
            self.late = late
            self.error = error
            self.attempts = attempts
            self.history = history
        }
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

    public init(
        eventID: UUID, familyMemberID: UUID, revokedUserID: UUID?, revokedByUserID: UUID, newFMKVersion: Int,
        recordsReencrypted: Int, committedAt: Date, deadlineAt: Date, completedAt: Date?, commitToLastAckMs: Int?,
        devices: [Device]
    ) {
        self.eventID = eventID
        self.familyMemberID = familyMemberID
        self.revokedUserID = revokedUserID
        self.revokedByUserID = revokedByUserID
        self.newFMKVersion = newFMKVersion
        self.recordsReencrypted = recordsReencrypted
        self.committedAt = committedAt
        self.deadlineAt = deadlineAt
        self.completedAt = completedAt
        self.commitToLastAckMs = commitToLastAckMs
        self.devices = devices
    }
}

/// Recent revocations, newest first.
public struct RevocationStatusList: Codable, Sendable, Equatable {
    public var revocations: [RevocationStatus]
    /// The event-stream position this snapshot reflects: open the stream after it.
    public var streamPosition: Int64
    /// How many expected devices of the listed revocations are in each lifecycle state.
    public var deviceStates: [String: Int]?

    public init(revocations: [RevocationStatus], streamPosition: Int64, deviceStates: [String: Int]? = nil) {
        self.revocations = revocations
        self.streamPosition = streamPosition
        self.deviceStates = deviceStates
    }
}
