import Foundation
import RescindMacros

/// An honest client's report that the grant service offered a key history it cannot
/// verify: a forged, broken, shortened or forked chain of owner-signed key statements, a
/// wrapped FMK the owner never committed to, a changed identity key, or an erasure asked
/// for without a signed reason. Agents sign it with their device key onto `device_acks`;
/// the CLI sends it to the audit service over HTTPS. The audit service raises it on
/// `audit_notifications` and shows it on the monitoring page.
///
/// It carries what was refused and why, never a key or a record.
@MemberwiseInit
public struct KeyChainViolation: Codable, Sendable, Equatable {
    public static let schema = "rescind.key_chain_violation.v1"

    /// Stable codes; each refusal maps to exactly one.
    public enum Code: String, Codable, Sendable, CaseIterable {
        /// A statement's signature does not verify with the key that must have signed it.
        case badSignature = "bad_signature"
        /// A statement's previous-hash does not name the statement before it.
        case brokenLink = "broken_link"
        /// Sequence numbers or FMK versions skip, repeat or go backwards.
        case versionGap = "version_gap"
        /// A statement signed by a key that is neither the pinned owner's nor reached from
        /// it by a transfer or rotation statement.
        case unknownSigner = "unknown_signer"
        /// The chain offered is shorter than one this client has already verified.
        case rollback
        /// The chain offered does not extend the head this client verified (a fork).
        case fork
        /// The FMK unwrapped does not match the owner's commitment to that version.
        case commitmentMismatch = "commitment_mismatch"
        /// The wrapped FMK served is not the one the owner's statement names for this holder.
        case wrappedKeyMismatch = "wrapped_key_mismatch"
        /// The wrapped FMK served is for a version other than the chain's current one.
        case staleVersion = "stale_version"
        /// This user is not a holder of the version served (a grant the owner never made).
        case notAHolder = "not_a_holder"
        /// A user's identity key changed without a rotation statement signed by the old key.
        case identityKeyChanged = "identity_key_changed"
        /// A `transfer` served before the security delay it names ran out (by this client's
        /// clock), without the owner's recovery key's signature: a service applying a pending
        /// transfer early.
        case ungovernedChange = "ungoverned_change"
        /// The service refused access (403) but no owner statement excludes this user and no
        /// signed command asked for erasure: the device keeps its copy.
        case unsignedErasure = "unsigned_erasure"
        /// The grant service named a public key to wrap an FMK to (or to hand ownership to) that
        /// this client did not verify: not the key the owner's history names for that user, not
        /// reached from a pinned key through rotations signed by it, not pinned after comparing
        /// codes. Nothing was wrapped.
        case unverifiedRecipientKey = "unverified_recipient_key"
        /// A statement that does not parse or breaks the message limits.
        case malformed
    }

    public var reportID: UUID = UUID()
    public var code: Code
    public var familyMemberID: UUID
    public var reporterUserID: UUID
    /// The reporting device (an agent's, or the CLI profile's device).
    public var reporterDeviceID: UUID
    /// The FMK version the service offered, when there was one.
    public var offeredFMKVersion: Int?
    /// The sequence number of the statement that failed, when there was one.
    public var statementSeq: Int?
    /// The sequence number of the last statement this client had verified (0: none).
    public var verifiedSeq: Int
    /// Human-readable, at most `MessageLimits.errorLength` characters, never key material.
    public var detail: String
    public var detectedAt: Date
}
