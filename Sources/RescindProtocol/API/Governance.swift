import Foundation

extension GovernedOperation {
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
}

extension RecoveryKeyChange {
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
