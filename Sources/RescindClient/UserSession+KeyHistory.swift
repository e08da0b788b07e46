import Foundation
import RescindCrypto
import RescindProtocol

/// Every key this client uses is checked against the family member's owner-signed key history
/// incrementally from what `keyHistory` holds; every change of who holds what that
/// this client makes carries its signed statement.
extension UserSession {
    /// A wrapped key that passed verification, its FMK, and the history's verified head.
    public struct VerifiedKey: Sendable {
        public var wrapped: WrappedKeyResponse
        public var fmk: SecretKey
        public var entry: KeyHistoryStore.Entry
    }

    /// Fetches my wrapped FMK with the statements after the head I verified, verifies both
    /// (`KeyHistoryVerifier`), keeps the new head, and returns the FMK.
    /// - Throws: `KeyHistoryError` after reporting it: nothing is kept; `GrantServiceError`
    ///   as the service answers (403 for a revoked user).
    public func verifiedKey(_ familyMemberID: UUID) async throws -> VerifiedKey {
        let wrapped = try await client.wrappedKey(familyMemberID, knownSeq: keyHistory.entry(familyMemberID)?.seq ?? 0)
        return try await verify(wrapped)
    }

    /// Verifies a wrapped key fetched with `knownSeq` = the store's head (`verifiedKey` does both).
    public func verify(_ wrapped: WrappedKeyResponse) async throws -> VerifiedKey {
        let familyMemberID = wrapped.familyMemberID
        let cached = keyHistory.entry(familyMemberID)
        var statements = wrapped.keyStatements ?? []
        // A long history comes in pages.
        while statements.count >= 500, statements.count % 500 == 0, let last = statements.last {
            let more = try await client.keyStatements(familyMemberID, after: last.statement.seq).statements
            if more.isEmpty { break }
            statements += more
        }
        do {
            let accepted = try await KeyHistoryVerifier.verify(
                familyMemberID: familyMemberID, cached: cached, statements: statements, wrapped: wrapped, me: keys.userID,
                myAgreementFingerprint: KeyStatement.fingerprint(ofAgreementKey: Data(keys.agreementKey.publicKey.rawRepresentation)),
                registeredOwnerKey: { owner in try await registeredIdentityKey(of: owner) },
                unwrap: { try unwrap($0) }, now: clock())
            if accepted.entry != cached { try await keyHistory.update(familyMemberID, accepted.entry) }
            return VerifiedKey(wrapped: wrapped, fmk: accepted.fmk, entry: accepted.entry)
        } catch let error as KeyHistoryError {
            await report(error, offeredVersion: wrapped.fmkVersion, verifiedSeq: cached?.seq ?? 0)
            throw error
        }
    }

    /// Verifies the statements after my verified head without a key (a revoked device reading
    /// the statement that excludes it). Keeps the new head; reports and throws on a refusal.
    public func verifiedHistory(_ familyMemberID: UUID) async throws -> KeyHistoryStore.Entry {
        let cached = keyHistory.entry(familyMemberID)
        let statements = try await client.keyStatements(familyMemberID, after: cached?.seq ?? 0).statements
        do {
            let entry = try KeyHistoryVerifier.extend(
                familyMemberID: familyMemberID, cached: cached, statements: statements, now: clock())
            if cached == nil {
                guard try await registeredIdentityKey(of: entry.ownerUserID) == entry.ownerIdentityKey else {
                    throw KeyHistoryError(
                        .identityKeyChanged, familyMemberID: familyMemberID, statementSeq: entry.seq,
                        "the owner's registered identity key is not the key its history was signed with")
                }
            }
            if entry != cached { try await keyHistory.update(familyMemberID, entry) }
            return entry
        } catch let error as KeyHistoryError {
            await report(error, offeredVersion: nil, verifiedSeq: cached?.seq ?? 0)
            throw error
        }
    }

    /// Reports a refusal this client made (for callers outside `verify`, e.g. an agent refusing an erasure).
    public func report(_ error: KeyHistoryError, offeredVersion: Int?, verifiedSeq: Int) async {
        await violationReporter.report(
            KeyChainViolation(
                code: error.code, familyMemberID: error.familyMemberID, reporterUserID: keys.userID, reporterDeviceID: deviceID,
                offeredFMKVersion: offeredVersion, statementSeq: error.statementSeq, verifiedSeq: verifiedSeq,
                detail: MessageLimits.safeText(error.detail, maxLength: MessageLimits.errorLength), detectedAt: Date()))
    }

    /// An owner's identity key as the service registers it; my own from my keys (so that a
    /// session still on the keys before a rotation checks against those).
    func registeredIdentityKey(of userID: UUID) async throws -> Data {
        if userID == keys.userID { return Data(keys.identityKey.publicKey.rawRepresentation) }
        return try await client.user(userID).identityPublicKey
    }

    // MARK: Making statements

    /// The `revoke` statement for a begun revocation's commit with these new grants (`rotate` for a
    /// rotation that revokes nobody).
    func revokeStatement(
        _ revocation: RevocationResponse, grants: [NewGrant], newFMK: SecretKey, after entry: KeyHistoryStore.Entry
    ) throws -> SignedKeyStatement {
        try nextStatement(
            after: entry, kind: revocation.revokedUserID == nil ? .rotate : .revoke, holders: grants.map { holder(for: $0) }, fmkVersion: revocation.newFMKVersion,
            commitment: Data(FMKCommitment.commit(
                newFMK, familyMemberID: revocation.familyMemberID, version: UInt32(revocation.newFMKVersion))),
            revokedUserID: revocation.revokedUserID)
    }

    /// As above, after verifying the history as it is now.
    func revokeStatement(_ revocation: RevocationResponse, grants: [NewGrant], newFMK: SecretKey) async throws -> SignedKeyStatement {
        try revokeStatement(revocation, grants: grants, newFMK: newFMK, after: try await verifiedKey(revocation.familyMemberID).entry)
    }

    /// My own self-wrapped copy as a holder entry.
    func ownHolder(_ wrapped: Data) -> KeyStatement.Holder {
        KeyStatement.Holder(
            userID: keys.userID, wrapping: .self,
            agreementKeyFingerprint: KeyStatement.fingerprint(ofAgreementKey: Data(keys.agreementKey.publicKey.rawRepresentation)),
            wrappedFMKHash: KeyStatement.wrappedHash(wrapped))
    }

    /// A holder entry for a copy in a revocation's new grants.
    func holder(for grant: NewGrant) -> KeyStatement.Holder {
        if grant.wrapping == .self { return ownHolder(grant.wrappedFMK) }
        return KeyStatement.Holder(
            userID: grant.granteeUserID, wrapping: .ecdh,
            agreementKeyFingerprint: KeyStatement.fingerprint(ofAgreementKey: grant.granteeAgreementPublicKey ?? Data()),
            wrappedFMKHash: KeyStatement.wrappedHash(grant.wrappedFMK))
    }

    /// The statement after `entry`, signed with my identity key (`signer` for a rekey: the old one).
    func nextStatement(
        after entry: KeyHistoryStore.Entry, kind: KeyStatement.Kind, holders: [KeyStatement.Holder],
        fmkVersion: Int? = nil, commitment: Data? = nil, revokedUserID: UUID? = nil, newOwner: KeyStatement.NewOwner? = nil,
        signer: Ed25519.PrivateKey? = nil, delay: TimeInterval? = nil, recoveryPublicKey: Data? = nil
    ) throws -> SignedKeyStatement {
        let head = entry.head.statement
        let key = signer ?? keys.identityKey
        let issuedAt = Timestamp.truncated(Date())
        return try signStatement(
            KeyStatement(
                familyMemberID: head.familyMemberID, seq: head.seq + 1, kind: kind, fmkVersion: fmkVersion ?? head.fmkVersion,
                previousHash: entry.headHash, ownerUserID: keys.userID,
                signerIdentityKey: Data(key.publicKey.rawRepresentation), holders: holders, revokedUserID: revokedUserID,
                newOwner: newOwner, fmkCommitment: commitment ?? head.fmkCommitment, issuedAt: issuedAt,
                notBefore: delay.map { issuedAt.addingTimeInterval($0) }, recoveryPublicKey: recoveryPublicKey),
            with: key)
    }

    func signStatement(_ statement: KeyStatement, with key: Ed25519.PrivateKey? = nil) throws -> SignedKeyStatement {
        try SignedKeyStatement(signing: statement, with: key ?? keys.identityKey)
    }
}
