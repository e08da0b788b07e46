import Foundation
import RescindMacros

/// An operation that changes who a user is, begun from one of the user's devices.
///
/// Begun without the recovery key, it is `pending` until `effectiveAt` (the deployment's security
/// delay after the service received it) and takes effect then unless it was decided before: a
/// second device of the user that was active before it began approves it at once or vetoes it
/// (which freezes the device that began it), the recovery key approves or cancels it, the
/// device that began it cancels it, or that device is retired (the operation is withdrawn).
/// A thief holding one unlocked device can therefore start such a change, but every other
/// device of the user hears of it and can stop it before it takes effect.
@MemberwiseInit
public struct GovernedOperation: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable, CaseIterable {
        case rotateIdentity = "rotate_identity"
        case transferOwnership = "transfer_ownership"
        /// A new recovery key (`RecoveryKeyChange`): a thief who could set one at once would hold
        /// everything the recovery key decides.
        case setRecovery = "set_recovery"
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
    public var decidedBy: Decider? = nil
    public var decidedByDevice: UUID? = nil
    public var decidedAt: Date? = nil
    /// The signed rotation (`rotate_identity`).
    public var rotation: IdentityRotation? = nil
    /// The transfer, with the owner's signed `transfer` statement (`transfer_ownership`).
    public var transfer: OwnershipTransfer? = nil
    /// The new recovery key (`set_recovery`).
    public var recoveryKeyChange: RecoveryKeyChange? = nil
}

/// An ownership transfer as a governed operation holds it: the family member, the new owner and
/// the owner's signed `transfer` statement naming them.
@MemberwiseInit
public struct OwnershipTransfer: Codable, Sendable, Equatable {
    public var familyMemberID: UUID
    public var newOwnerUserID: UUID
    public var statement: SignedKeyStatement?
}

/// A new recovery key for a user, signed by that key itself (only whoever holds it registers it)
/// over the user, the key and the key it replaces: made for one state, it applies to that state
/// only (a replay after the key changed again is superseded).
@MemberwiseInit
public struct RecoveryKeyChange: Codable, Sendable, Equatable {
    public var userID: UUID
    public var recoveryPublicKey: Data
    /// The key it replaces; absent when the user has none.
    public var previousRecoveryPublicKey: Data?
    /// The new key's Ed25519 signature over `signingInput()`.
    public var signature: Data
    /// The user's identity key's `RecoveryKeyBinding` of the new key, kept when the change takes
    /// effect under the same identity key (a rotation meanwhile leaves the new key unbound).
    public var recoveryBinding: Data? = nil

    struct Signed: Encodable {
        let userID: UUID
        let recoveryPublicKey: Data
        let previousRecoveryPublicKey: Data?

    }

    /// A domain label, a newline, the canonical JSON of the user, the key and the key it replaces.
    public static func signingInput(userID: UUID, recoveryPublicKey: Data, previousRecoveryPublicKey: Data?) throws -> [UInt8] {
        Array("rescind.recovery_key_change.v1\n".utf8)
            + [UInt8](try CanonicalJSON.encode(
                Signed(userID: userID, recoveryPublicKey: recoveryPublicKey, previousRecoveryPublicKey: previousRecoveryPublicKey)))
    }

    public func signingInput() throws -> [UInt8] {
        try Self.signingInput(userID: userID, recoveryPublicKey: recoveryPublicKey, previousRecoveryPublicKey: previousRecoveryPublicKey)
    }
}

/// `POST /v1/governance/operations/{id}/approve` from a device, with an optional body: the
/// approving device's `DeviceApproval` of an identity rotation. With the one of the device that
/// began it, two certified devices agree, and the rotation takes effect at once.
@MemberwiseInit
public struct GovernanceApproval: Codable, Sendable, Equatable {
    public var deviceApproval: DeviceApproval? = nil
}

/// A user's governed operations, newest first.
@MemberwiseInit
public struct GovernedOperationList: Codable, Sendable, Equatable {
    public var operations: [GovernedOperation]
}
