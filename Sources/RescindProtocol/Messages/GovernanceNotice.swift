import Foundation
import RescindMacros

/// A change to who a user is or what devices act for them, announced by the grant service in
/// the transaction that makes it (signed `grant-service`, schema `rescind.governance_notice.v1`).
///
/// One copy per device that must hear of it, on `device_commands` keyed by that device (the
/// user's other active devices; for an identity rotation or an enrolment, also the devices of
/// every owner who shares a family member with the user), and one copy on `access_events` keyed
/// by the user id, without `device_id`, for the audit service and the people watching the
/// stream. A thief who begins a change from one stolen device is thereby heard of within
/// seconds by every device that can veto it.
///
/// A notice carries identifiers and times only: never key material, never what the operation
/// would install. A device that acts on one (`rescind-agent veto`) asks the grant service for
/// the operation itself.
@MemberwiseInit
public struct GovernanceNotice: Codable, Sendable, Equatable {
    public static let schema = "rescind.governance_notice.v1"

    /// What changed, or is about to.
    public enum Change: String, Codable, Sendable, CaseIterable {
        /// A governed identity rotation (`operation_id`).
        case rotateIdentity = "rotate_identity"
        /// A governed ownership transfer (`operation_id`, `family_member_id`).
        case transferOwnership = "transfer_ownership"
        /// A governed change of the user's recovery key (`operation_id`).
        case setRecovery = "set_recovery"
        /// A device was enrolled (`subject_device_id`); by another device, provisionally until `effective_at`.
        case enrolDevice = "enrol_device"
        /// A device was retired, at once (`subject_device_id`).
        case retireDevice = "retire_device"
        /// The recovery key undid a retirement (`subject_device_id`).
        case restoreDevice = "restore_device"
    }

    /// Why the addressed device hears of it.
    public enum Audience: String, Codable, Sendable, CaseIterable {
        /// It is a device of the user the change concerns.
        case user
        /// Its user owns a family member the user the change concerns holds a grant to.
        case owner
    }

    public var noticeID: UUID = UUID()
    /// The addressee, on `device_commands`; absent on `access_events`.
    public var deviceID: UUID? = nil
    public var audience: Audience? = nil
    /// The user the change concerns.
    public var userID: UUID
    public var change: Change
    /// `pending` while a governed operation waits for its delay; the decision after. An
    /// immediate change (enrolment, retirement, restoration) is `applied`.
    public var state: GovernedOperation.State
    public var operationID: UUID? = nil
    public var subjectDeviceID: UUID? = nil
    public var familyMemberID: UUID? = nil
    /// The device that began or decided it; absent when the recovery key or the delay did.
    public var actorDeviceID: UUID?
    public var decidedBy: GovernedOperation.Decider? = nil
    /// When a pending operation takes effect unless vetoed; for an enrolment by another device,
    /// until when it is provisional (retiring it vetoes it and freezes the device that enrolled
    /// it; retiring that device retires it too).
    public var effectiveAt: Date? = nil
    public var occurredAt: Date

    /// The notice as one device receives it.
    public func addressed(to deviceID: UUID, as audience: Audience) -> GovernanceNotice {
        var notice = self
        notice.deviceID = deviceID
        notice.audience = audience
        return notice
    }
}
