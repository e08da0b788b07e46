import Foundation
import RescindMacros

/// `POST /v1/recovery/challenges`: a single-use challenge for an order of `userID`'s recovery
/// key. Anonymous — the recovery key stands for a user who may have no device left — and
/// issued only for users who registered a recovery key, a few at a time.
@MemberwiseInit
public struct RecoveryChallengeRequest: Codable, Sendable, Equatable {
    public var userID: UUID
}

/// What a user's recovery key orders, at once, over a fresh challenge
/// (`POST /v1/recovery/actions`): enrol a device (even when every device of the user is
/// retired), retire one (the thief's), restore one a thief retired, clear a frozen one, vouch
/// for one (it governs at once, as a device the recovery key enrolled), and approve (make
/// effective now) or cancel a pending governed operation.
@MemberwiseInit
public struct RecoveryAction: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable, CaseIterable {
        case enrol, retire, restore, clear, vouch, approve, cancel
    }

    public var userID: UUID
    public var challengeID: UUID
    public var kind: Kind
    /// The device to enrol (`enrol` only).
    public var device: RegisterDeviceRequest? = nil
    /// The device to retire, restore, clear or vouch for.
    public var deviceID: UUID? = nil
    /// The governed operation to approve or cancel.
    public var operationID: UUID? = nil
    /// Approving an ownership transfer: the recovery key's signature over its `transfer` key
    /// statement, which the service adds to the statement (`recovery_signature`) so that every
    /// verifier accepts it before its `not_before`.
    public var statementSignature: Data? = nil


    /// What the recovery key signs: `rescind-recovery-action-v1\n` and the canonical JSON of the
    /// action with the challenge's nonce, so a signature works for this challenge only.
    public func signingInput(nonce: Data) throws -> [UInt8] {
        Array("rescind-recovery-action-v1\n".utf8) + [UInt8](try CanonicalJSON.encode(Statement(action: self, nonce: nonce)))
    }

    struct Statement: Encodable {
        let action: RecoveryAction
        let nonce: Data
    }
}

/// A recovery action and the recovery key's signature over `RecoveryAction.signingInput`.
@MemberwiseInit
public struct SignedRecoveryAction: Codable, Sendable, Equatable {
    public var action: RecoveryAction
    public var signature: Data
}

/// What a recovery action did.
@MemberwiseInit
public struct RecoveryActionResult: Codable, Sendable, Equatable {
    public var kind: RecoveryAction.Kind
    /// The device enrolled, retired, restored or cleared.
    public var deviceID: UUID? = nil
    /// The governed operation approved or cancelled, as it now stands.
    public var operation: GovernedOperation? = nil
}
