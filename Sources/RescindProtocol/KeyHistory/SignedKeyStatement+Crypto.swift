import Foundation
import RescindCrypto

extension SignedKeyStatement {
    /// Signs `statement` with `key`, which must be the key the statement names as its signer.
    public init(signing statement: KeyStatement, with key: Ed25519.PrivateKey) throws {
        precondition(
            statement.signerIdentityKey == Data(key.publicKey.rawRepresentation), "a statement names the key that signs it")
        self.init(statement: statement, signature: Data(key.signature(for: try statement.signingInput())))
    }

    /// SHA-256 of the statement's canonical JSON followed by the signature: what the next
    /// statement's `previous_hash` names.
    public func hash() throws -> Data {
        Data(SHA256.hash([UInt8](try CanonicalJSON.encode(statement)) + [UInt8](signature)))
    }

    /// Whether a `rekey` carries a valid signature by the new owner key it names (false for a
    /// statement of another kind, which carries none).
    public func hasValidNewOwnerSignature() -> Bool {
        guard statement.kind == .rekey, let newOwner = statement.newOwner, let signature = newOwnerSignature,
            let key = try? Ed25519.PublicKey(rawRepresentation: [UInt8](newOwner.identityPublicKey)),
            let input = try? statement.signingInput()
        else { return false }
        return key.isValidSignature([UInt8](signature), for: input)
    }

    /// Whether a `transfer` carries a valid signature by `recoveryKey` (the owner's recovery key
    /// as the history names it); false without one.
    public func hasValidRecoverySignature(by recoveryKey: Data?) -> Bool {
        guard statement.kind == .transfer, let recoveryKey, let signature = recoverySignature,
            let key = try? Ed25519.PublicKey(rawRepresentation: [UInt8](recoveryKey)),
            let input = try? statement.signingInput()
        else { return false }
        return key.isValidSignature([UInt8](signature), for: input)
    }

    /// Whether a `transfer` takes effect before its `not_before`: `recoveryKey` (the owner's, as the
    /// history names it) signed it, or two devices it certified approved it.
    public func isApprovedAtOnce(under recoveryKey: Data?) -> Bool {
        guard statement.kind == .transfer else { return false }
        if hasValidRecoverySignature(by: recoveryKey) { return true }
        guard let approvals = deviceApprovals, let input = try? statement.signingInput() else { return false }
        return approvals.coSign(input, recoveryKey: recoveryKey, userID: statement.ownerUserID)
    }

    /// Whether the signature verifies with the key the statement names as its signer.
    public func hasValidSignature() -> Bool {
        guard let key = try? Ed25519.PublicKey(rawRepresentation: [UInt8](statement.signerIdentityKey)),
            let input = try? statement.signingInput()
        else { return false }
        return key.isValidSignature([UInt8](signature), for: input)
    }
}

extension IdentityRotation {
    /// Whether the statement is signed by the identity key it replaces and by the new one.
    public func hasValidSignatures() -> Bool {
        guard let input = try? statement.signingInput(),
            let previous = try? Ed25519.PublicKey(rawRepresentation: [UInt8](statement.previousIdentityPublicKey)),
            let next = try? Ed25519.PublicKey(rawRepresentation: [UInt8](statement.identityPublicKey))
        else { return false }
        return previous.isValidSignature([UInt8](previousKeySignature), for: input)
            && next.isValidSignature([UInt8](newKeySignature), for: input)
    }

    /// The earliest its user's `rekey` statements take effect without the recovery key's approval:
    /// `KeyStatement.minimumDelay` after the rotation was signed. Every verifier holds a rekey to
    /// it, and the grant service applies no rotation before it without that approval.
    public var rekeyFloor: Date { statement.issuedAt.addingTimeInterval(KeyStatement.minimumDelay) }

    /// Whether `recoverySignature` is `recoveryKey`'s over the statement; false without either.
    public func hasValidRecoverySignature(by recoveryKey: Data?) -> Bool {
        guard let recoveryKey, let signature = recoverySignature,
            let key = try? Ed25519.PublicKey(rawRepresentation: [UInt8](recoveryKey)),
            let input = try? statement.signingInput()
        else { return false }
        return key.isValidSignature([UInt8](signature), for: input)
    }

    /// Whether two devices with different keys, each certified by `recoveryKey` for the rotation's
    /// user, approved the statement (`deviceApprovals`); false without a recovery key.
    public func isCoSigned(by recoveryKey: Data?) -> Bool {
        guard let approvals = deviceApprovals, let input = try? statement.signingInput() else { return false }
        return approvals.coSign(input, recoveryKey: recoveryKey, userID: statement.userID)
    }

    /// Whether the owner's family members follow the rotation at once: the recovery key `recoveryKey`
    /// approved it, or two devices it certified did.
    public func isApprovedAtOnce(under recoveryKey: Data?) -> Bool {
        hasValidRecoverySignature(by: recoveryKey) || isCoSigned(by: recoveryKey)
    }
}

extension KeyStatement {
    /// SHA-256 of an X25519 public key: how a statement names the key a copy was wrapped to.
    public static func fingerprint(ofAgreementKey key: Data) -> Data { Data(SHA256.hash([UInt8](key))) }

    /// SHA-256 of the wrapped bytes stored for a holder.
    public static func wrappedHash(_ wrapped: Data) -> Data { Data(SHA256.hash([UInt8](wrapped))) }
}

extension KeyStatement: BoundaryValidated {
    /// Most holders one statement may name (users sharing one family member).
    public static let maxHolders = 1_000

    public func validate() throws(MessageError) {
        let check = FieldCheck()
        try check.integer(seq, "seq", in: 1...MessageLimits.maxInteger)
        try check.integer(fmkVersion, "fmk_version", in: 1...MessageLimits.maxInteger)
        if let previousHash { try check.bytes(previousHash, "previous_hash", count: 32) }
        guard (previousHash == nil) == (seq == 1) else { throw .invalidField("previous_hash") }
        try check.bytes(signerIdentityKey, "signer_identity_key", count: 32)
        try check.bytes(fmkCommitment, "fmk_commitment", count: 32)
        try check.timestamp(issuedAt, "issued_at")
        guard !holders.isEmpty, holders.count <= Self.maxHolders,
            Set(holders.map(\.userID)).count == holders.count
        else { throw .invalidField("holders") }
        for holder in holders {
            try FieldCheck("holders.").bytes(holder.agreementKeyFingerprint, "agreement_key_fingerprint", count: 32)
            try FieldCheck("holders.").bytes(holder.wrappedFMKHash, "wrapped_fmk_hash", count: 32)
        }
        if let newOwner { try FieldCheck("new_owner.").bytes(newOwner.identityPublicKey, "identity_public_key", count: 32) }
        switch kind {
        case .revoke: guard revokedUserID != nil else { throw .invalidField("revoked_user_id") }
        case .transfer, .rekey: guard newOwner != nil else { throw .invalidField("new_owner") }
        default: break
        }
        if kind != .revoke, revokedUserID != nil { throw .invalidField("revoked_user_id") }
        if kind != .transfer, kind != .rekey, newOwner != nil { throw .invalidField("new_owner") }
        if let notBefore {
            try check.timestamp(notBefore, "not_before")
            guard kind == .transfer else { throw .invalidField("not_before") }
        }
        if let recoveryPublicKey {
            try check.bytes(recoveryPublicKey, "recovery_public_key", count: 32)
            guard kind == .create || kind == .adopt else { throw .invalidField("recovery_public_key") }
        }
    }
}
