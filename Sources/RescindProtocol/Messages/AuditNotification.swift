import Foundation
import RescindMacros

/// What the audit service concluded, on `audit_notifications`, signed by the audit
/// service (`signer` `audit-service`). Keyed by family member id when one is known.
///
/// One flat shape for every kind so that monitors can route on `kind` alone; the
/// fields a kind carries are listed on each case (the JSON Schema enforces them).
@MemberwiseInit
public struct AuditNotification: Codable, Sendable, Equatable {
    public static let schema = "rescind.audit_notification.v1"
    public static let signer = "audit-service"

    public enum Kind: String, Codable, Sendable, CaseIterable {
        /// Every expected device applied the revocation: `family_member_id`, `event_id`,
        /// `commit_to_last_ack_ms`, `devices`.
        case revocationCompleted = "revocation_completed"
        /// A device had not acknowledged by the deadline: `family_member_id`, `event_id`,
        /// `device_id`, `deadline`. Sent once per device and revocation.
        case ackOverdue = "ack_overdue"
        /// A device reported that it could not comply: `family_member_id`, `event_id`,
        /// `device_id`, `error`.
        case ackFailed = "ack_failed"
        /// A message was refused (unsigned, forged, malformed, unknown): `rejection`, and
        /// `family_member_id` / `event_id` / `device_id` when they could be attributed.
        case messageRejected = "message_rejected"
        /// A client refused a key history and reported it: `family_member_id`, `device_id`
        /// (the reporter's), `violation`, `reporter_verification`.
        case keyChainViolation = "key_chain_violation"
        /// The grant service announced a change to who a user is (`GovernanceNotice`, pending or
        /// decided; an enrolment, retirement or restoration): `governance`, and
        /// `family_member_id` for a transfer.
        case governanceNotice = "governance_notice"
    }

    /// How the audit service knows who sent a `key_chain_violation`.
    public enum ReporterVerification: String, Codable, Sendable, CaseIterable {
        /// Signed on `device_acks` with the key a revocation event listed for that device.
        case deviceSignature = "device_signature"
        /// Sent over HTTPS with a grant-service token of that user's device.
        case deviceToken = "device_token"
        /// Signed on `device_acks` by a device the audit service has no key for yet (it learns
        /// device keys only from revocation events): shown, not in the owner's audit log.
        case unverifiedDevice = "unverified_device"
    }

    /// A device's final state, as reported in `revocation_completed`.
    @MemberwiseInit
    public struct DeviceOutcome: Codable, Sendable, Equatable {
        public var deviceID: UUID
        public var userID: UUID
        public var action: DeviceAction
        /// A command's state (`revocation_devices.state`): final `applied`, `already_applied`,
        /// `healed` or `failed`; else `pending`, `delivered`, `not_now`, `overdue`, `reissued` or `expired`.
        public var state: String
        public var ackedAt: Date?
        /// The device acknowledged after its deadline had passed.
        public var late: Bool
    }

    /// Where a refused message was read and why it was refused; never its contents.
    @MemberwiseInit
    public struct Rejection: Codable, Sendable, Equatable {
        public var topic: String
        public var partition: Int32
        public var offset: Int64
        /// Stable code: `malformed`, `unexpected_schema`, `bad_signature`, `unsigned_content`,
        /// `unknown_signer`, `unknown_revocation` (an ack whose revocation never arrived),
        /// `unknown_device` (not expected by the revocation), `mismatched_ack` (action or
        /// version contradicts the revocation), `unknown_topic`, `invalid_field` (outside
        /// `MessageLimits`), `unprocessable` (quarantined: storing it failed for a reason that
        /// retrying does not change), `retries_exhausted` (quarantined after the retry budget),
        /// `duplicate_report` (a key chain violation whose report id was already recorded),
        /// `mismatched_report` (a violation naming another user than its device's).
        public var reason: String
        /// The claimed signer, when the envelope could be read (not trusted; control characters escaped).
        public var signer: String?
    }

    /// Unique per conclusion: a redelivered input never produces a second notification id.
    public var notificationID: UUID
    public var kind: Kind
    public var familyMemberID: UUID?
    public var eventID: UUID?
    public var deviceID: UUID?
    /// Revocation commit (the event's `occurred_at`) to the acknowledgement that completed it.
    public var commitToLastAckMs: Int? = nil
    public var devices: [DeviceOutcome]? = nil
    public var deadline: Date? = nil
    /// The device's own failure text (bounded), for `ack_failed`.
    public var error: String? = nil
    public var rejection: Rejection? = nil
    /// The client's report, for `key_chain_violation`.
    public var violation: KeyChainViolation? = nil
    public var reporterVerification: ReporterVerification? = nil
    /// The notice, for `governance_notice` (as published on `access_events`, without an addressee).
    public var governance: GovernanceNotice? = nil
    public var occurredAt: Date
}
