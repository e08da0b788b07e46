import Foundation
import RescindProtocol

/// What a change of who holds which FMK must come with: the owner's signed key statement,
/// checked against the facts the store read in its transaction (defence in depth: the
/// service cannot make a statement, and clients verify the chain themselves).
struct KeyStatementFacts: Sendable {
    var familyMemberID: UUID
    var kind: KeyStatement.Kind
    /// The stored head of the chain, if any (nil only when a family member is created).
    var headSeq: Int
    var headHash: Data?
    /// The key that must sign: the head's effective owner key (its `new_owner` key after a
    /// transfer or rekey), or the caller's registered identity key for `create`.
    var signer: Data
    /// The owner the statement must name (the caller).
    var ownerUserID: UUID
    /// The family member's FMK version after the change.
    var fmkVersion: Int
    /// Every user holding an active grant after the change.
    var holders: Set<UUID>
    /// The holders whose copy this request stores: their wrapped bytes, and the SHA-256 of the
    /// registered X25519 key it was wrapped to.
    var changed: [UUID: (wrapped: Data, fingerprint: Data)]
    var revokedUserID: UUID?
    var newOwner: KeyStatement.NewOwner?
}

extension GrantRules {
    static let keyStatementRequired = RuleViolation.refused(
        "key_statement_required", "this change needs the owner's signed key statement")

    static func invalidKeyStatement(_ why: String) -> RuleViolation {
        .refused("invalid_key_statement", "the key statement is refused: \(why)")
    }

    /// The statement is well-formed, is the next link of the stored chain, is signed by the key
    /// that must sign it, and describes exactly the holders and version this request leaves.
    static func checkKeyStatement(_ signed: SignedKeyStatement?, _ facts: KeyStatementFacts) throws(RuleViolation) {
        guard let signed else { throw keyStatementRequired }
        let statement = signed.statement
        do {
            try statement.validate()
        } catch {
            throw invalidKeyStatement("\(error)")
        }
        guard statement.familyMemberID == facts.familyMemberID else { throw invalidKeyStatement("it names another family member") }
        guard statement.kind == facts.kind else { throw invalidKeyStatement("this change needs a \(facts.kind.rawValue) statement") }
        guard statement.seq == facts.headSeq + 1, statement.previousHash == facts.headHash else {
            throw RuleViolation(
                kind: .conflict, code: "key_statement_stale",
                message: "the key history is at statement \(facts.headSeq); sign the next one after it")
        }
        guard statement.signerIdentityKey == facts.signer else {
            throw invalidKeyStatement("it is not signed by the family member's owner key")
        }
        guard signed.hasValidSignature() else { throw invalidKeyStatement("its signature does not verify") }
        if statement.kind == .rekey {
            guard signed.hasValidNewOwnerSignature() else {
                throw invalidKeyStatement("a rekey must also be signed by the new owner key it names")
            }
        } else if signed.newOwnerSignature != nil {
            throw invalidKeyStatement("only a rekey carries a new owner signature")
        }
        guard statement.ownerUserID == facts.ownerUserID else { throw invalidKeyStatement("it names another owner") }
        guard statement.fmkVersion == facts.fmkVersion else {
            throw invalidKeyStatement("it names FMK v\(statement.fmkVersion), the change leaves v\(facts.fmkVersion)")
        }
        guard Set(statement.holders.map(\.userID)) == facts.holders else {
            throw invalidKeyStatement("its holders are not the users who hold the key after this change")
        }
        for (userID, copy) in facts.changed {
            guard let holder = statement.holder(userID),
                holder.wrappedFMKHash == KeyStatement.wrappedHash(copy.wrapped),
                holder.agreementKeyFingerprint == copy.fingerprint
            else { throw invalidKeyStatement("it does not name the wrapped key stored for \(userID.uuidString.lowercased())") }
        }
        guard statement.revokedUserID == facts.revokedUserID else { throw invalidKeyStatement("it names another revoked user") }
        guard statement.newOwner == facts.newOwner else { throw invalidKeyStatement("it names another new owner or key") }
    }

    /// The key that signs the statement after `head`: its `new_owner` key after a transfer or a
    /// rekey, else its own signer.
    static func effectiveOwnerKey(after head: KeyStatement) -> Data {
        switch head.kind {
        case .transfer, .rekey: head.newOwner?.identityPublicKey ?? head.signerIdentityKey
        default: head.signerIdentityKey
        }
    }
}
