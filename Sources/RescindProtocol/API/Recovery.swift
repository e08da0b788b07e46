import Foundation

extension RecoveryAction {
    public enum Kind: String, Codable, Sendable, CaseIterable {
        case enrol, retire, restore, clear, vouch, approve, cancel
    }

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
