import Foundation

/// An operation that changes who a user is, begun from one of the user's devices.
///
/// Begun without the recovery key, it is `pending` until `effectiveAt` (the deployment's security
/// delay after the service received it) and takes effect then unless it was decided before: a
/// second device of the user that was active before it began approves it at once or vetoes it
/// (which freezes the device that began it), the recovery key approves or cancels it, the
/// device that began it cancels it, or that device is retired (the operation is withdrawn).
/// A thief holding one unlocked device can therefore start such a change, but every other
/// device of the user hears of it and can stop it before it takes effect.
public struct GovernedOperation: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable, CaseIterable {
        case rotateIdentity = "rotate_identity"
        case transferOwnership = "transfer_ownership"
    }

    public enum State: String, Codable, Sendable, CaseIterable {
        case pending, applied, vetoed, cancelled, withdrawn, superseded
    }

    /// Who decided an operation that is no longer pending.
    public enum Decider: String, Codable, Sendable, CaseIterable {
        /// A device of the user: an approval, a veto, or the initiator's cancellation.
        case device
        case recoveryKey = "recovery_key"
        /// Nobody vetoed it within the security delay.
        case delay
        /// The device that began it was retired before it took effect.
        case retirement
    }

    public var operationID: UUID
    public var userID: UUID
    public var kind: Kind
    public var state: State
    /// The device that began it.
    public var initiatedBy: UUID
    public var receivedAt: Date
    /// When it takes effect if nobody decides it first.
    public var effectiveAt: Date
    public var decidedBy: Decider?
    public var decidedByDevice: UUID?
    public var decidedAt: Date?
    /// The signed rotation (`rotate_identity`).
    public var rotation: IdentityRotation?
    /// The transfer, with the owner's signed `transfer` statement (`transfer_ownership`).
    public var transfer: OwnershipTransfer?

    public init(
        operationID: UUID, userID: UUID, kind: Kind, state: State, initiatedBy: UUID, receivedAt: Date, effectiveAt: Date,
        decidedBy: Decider? = nil, decidedByDevice: UUID? = nil, decidedAt: Date? = nil, rotation: IdentityRotation? = nil,
        transfer: OwnershipTransfer? = nil
    ) {
        self.operationID = operationID
        self.userID = userID
        self.kind = kind
        self.state = state
        self.initiatedBy = initiatedBy
        self.receivedAt = receivedAt
        self.effectiveAt = effectiveAt
        self.decidedBy = decidedBy
        self.decidedByDevice = decidedByDevice
        self.decidedAt = decidedAt
        self.rotation = rotation
        self.transfer = transfer
    }

    enum CodingKeys: String, CodingKey {
        case operationID = "operation_id"
        case userID = "user_id"
        case kind, state
        case initiatedBy = "initiated_by"
        case receivedAt = "received_at"
        case effectiveAt = "effective_at"
        case decidedBy = "decided_by"
        case decidedByDevice = "decided_by_device"
        case decidedAt = "decided_at"
        case rotation, transfer
    }
}

/// An ownership transfer as a governed operation holds it: the family member, the new owner and
/// the owner's signed `transfer` statement naming them.
public struct OwnershipTransfer: Codable, Sendable, Equatable {
    public var familyMemberID: UUID
    public var newOwnerUserID: UUID
    public var statement: SignedKeyStatement?

    public init(familyMemberID: UUID, newOwnerUserID: UUID, statement: SignedKeyStatement?) {
        self.familyMemberID = familyMemberID
        self.newOwnerUserID = newOwnerUserID
        self.statement = statement
    }

    enum CodingKeys: String, CodingKey {
        case familyMemberID = "family_member_id"
        case newOwnerUserID = "new_owner_user_id"
        case statement
    }
}

/// A user's governed operations, newest first.
public struct GovernedOperationList: Codable, Sendable, Equatable {
    public var operations: [GovernedOperation]

    public init(operations: [GovernedOperation]) {
        self.operations = operations
    }

    enum CodingKeys: String, CodingKey {
        case operations
    }
}
