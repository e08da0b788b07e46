import Foundation
import RescindCrypto
import RescindProtocol

/// Checks a family member's key history and the wrapped key served with it, purely: the state
/// this client verified before, the statements the service sent after it, the wrapped key, and
/// how to unwrap it → the state to keep and the FMK, or a `KeyHistoryError`.
///
/// The rules:
/// - every statement is well-formed, signed by the pinned owner key (or by the key a `transfer`
///   or `rekey` statement, signed by the key before it, handed over to), names the owner that
///   key belongs to, has the next sequence number and names the previous statement's hash; a
///   `rekey` is signed by the new key as well;
/// - a `transfer` is signed by the owner's recovery key as well (the key the owner's `create` or
///   `adopt` statement named) or approved by two devices that key certified (`DeviceApproval`),
///   or it names a `not_before` at least `KeyStatement.minimumDelay`
///   after it was issued and this client's clock has passed it (`ungoverned_change`): the security
///   delay is the verifier's to enforce, so a grant service that applies a pending transfer early
///   — or one a veto stopped — changes no client's idea of who owns the family member;
/// - a `rekey` carries the owner's identity rotation to its new key, which that recovery key
///   approved (itself, or through two devices it certified) or which began
///   `KeyStatement.minimumDelay` ago by this client's clock (`ungoverned_change`);
/// - versions: `create` is v1 (and only seq 1), `revoke` moves one up, the rest keep it;
/// - the chain never goes below the head verified before (`rollback`) and always extends it (`fork`);
/// - the wrapped key is at the head's version (`stale_version`), names me as a holder
///   (`not_a_holder`), has the hash the statement names when the statement names my current
///   X25519 key (`wrapped_key_mismatch`), and unwraps to the FMK the owner committed to
///   (`commitment_mismatch`).
///
/// A grantee re-wraps its own copy after its identity rotation, which the owner cannot sign:
/// the statement still names its old key's fingerprint and the old copy's hash, so for a holder
/// entry whose fingerprint is not my current key only the commitment is checked. That is the
/// property that matters: I never use a key the owner did not issue.
///
/// First use: with nothing verified, the chain must start at seq 1 with `create`, and its
/// first signer is pinned; `registeredOwnerKey` (the owner's key from `GET /v1/users/{owner}`)
/// must then be the key the chain ends at, else `identity_key_changed`.
public enum KeyHistoryVerifier {
    public struct Accepted: Sendable {
        public var entry: KeyHistoryStore.Entry
        public var fmk: SecretKey
    }

    /// - Parameter me: my user id and the SHA-256 of my current X25519 public key.
    /// - Parameter registeredOwnerKey: asked for only at first use (nil cached state).
    public static func verify(
        familyMemberID: UUID, cached: KeyHistoryStore.Entry?, statements: [SignedKeyStatement],
        wrapped: WrappedKeyResponse, me: UUID, myAgreementFingerprint: Data,
        registeredOwnerKey: (UUID) async throws -> Data, unwrap: (WrappedKeyResponse) throws -> SecretKey,
        now: Date = Date()
    ) async throws -> Accepted {
        func fail(_ code: KeyChainViolation.Code, _ seq: Int?, _ detail: String) -> KeyHistoryError {
            KeyHistoryError(code, familyMemberID: familyMemberID, statementSeq: seq, detail)
        }
        let chain = try extend(familyMemberID: familyMemberID, cached: cached, statements: statements, now: now)
        if cached == nil {
            let registered = try await registeredOwnerKey(chain.ownerUserID)
            guard registered == chain.ownerIdentityKey else {
                throw fail(.identityKeyChanged, chain.seq, "the owner's registered identity key is not the key its history was signed with")
            }
        }
        let head = chain.head.statement
        guard wrapped.fmkVersion == head.fmkVersion else {
            throw fail(.staleVersion, head.seq, "the wrapped key is for FMK v\(wrapped.fmkVersion), the owner's history is at v\(head.fmkVersion)")
        }
        guard let holder = head.holder(me) else {
            throw fail(.notAHolder, head.seq, "the owner's statement \(head.seq) does not name this user as a holder of v\(head.fmkVersion)")
        }
        if holder.agreementKeyFingerprint == myAgreementFingerprint {
            guard holder.wrappedFMKHash == KeyStatement.wrappedHash(wrapped.wrappedFMK), holder.wrapping == wrapped.wrapping else {
                throw fail(.wrappedKeyMismatch, head.seq, "the wrapped key served is not the one the owner's statement \(head.seq) names")
            }
        }
        let fmk: SecretKey
        do {
            fmk = try unwrap(wrapped)
        } catch {
            throw fail(.wrappedKeyMismatch, head.seq, "the wrapped key served does not open with this user's keys")
        }
        guard FMKCommitment.matches([UInt8](head.fmkCommitment), fmk: fmk, familyMemberID: familyMemberID, version: UInt32(head.fmkVersion)) else {
            throw fail(.commitmentMismatch, head.seq, "the FMK v\(head.fmkVersion) unwrapped is not the one the owner committed to")
        }
        return Accepted(entry: chain, fmk: fmk)
    }

    /// The chain after `statements`, checked link by link from `cached` (or from seq 1).
    /// - Parameter now: this client's clock, which a transfer's `not_before` must have passed.
    public static func extend(
        familyMemberID: UUID, cached: KeyHistoryStore.Entry?, statements offered: [SignedKeyStatement], now: Date = Date()
    ) throws -> KeyHistoryStore.Entry {
        func fail(_ code: KeyChainViolation.Code, _ seq: Int?, _ detail: String) -> KeyHistoryError {
            KeyHistoryError(code, familyMemberID: familyMemberID, statementSeq: seq, detail)
        }
        var statements = offered
        if let cached, let first = statements.first, first.statement.seq <= cached.seq {
            // An answer that repeats what I verified is fine if it passes through my head.
            let offeredEnd = statements.last!.statement.seq
            guard offeredEnd >= cached.seq else {
                throw fail(.rollback, offeredEnd, "the service offered a history ending at statement \(offeredEnd), below statement \(cached.seq) already verified")
            }
            guard let mine = statements.first(where: { $0.statement.seq == cached.seq }),
                (try? mine.hash()) == cached.headHash
            else { throw fail(.fork, cached.seq, "the service offered another statement \(cached.seq) than the one already verified") }
            statements.removeAll { $0.statement.seq <= cached.seq }
        }
        var state = cached
        for (index, signed) in statements.enumerated() {
            let statement = signed.statement
            do {
                try statement.validate()
            } catch {
                throw fail(.malformed, statement.seq, "statement \(statement.seq) is malformed: \(error)")
            }
            guard statement.familyMemberID == familyMemberID else {
                throw fail(.malformed, statement.seq, "statement \(statement.seq) is about another family member")
            }
            guard let previous = state else {
                guard statement.seq == 1, statement.kind == .create else {
                    throw fail(.versionGap, statement.seq, "the history does not start with the owner's create statement")
                }
                guard statement.fmkVersion == 1 else { throw fail(.versionGap, 1, "the create statement is not FMK v1") }
                guard signed.hasValidSignature() else { throw fail(.badSignature, 1, "the create statement's signature does not verify") }
                state = KeyHistoryStore.Entry(
                    ownerIdentityKey: statement.signerIdentityKey, ownerUserID: statement.ownerUserID, head: signed,
                    headHash: try signed.hash(), ownerRecoveryKey: statement.recoveryPublicKey)
                continue
            }
            guard statement.seq == previous.seq + 1 else {
                throw fail(.versionGap, statement.seq, "statement \(statement.seq) follows statement \(previous.seq)")
            }
            guard statement.previousHash == previous.headHash else {
                throw index == 0 && cached != nil
                    ? fail(.fork, statement.seq, "statement \(statement.seq) does not extend statement \(previous.seq) already verified")
                    : fail(.brokenLink, statement.seq, "statement \(statement.seq) does not name the hash of statement \(previous.seq)")
            }
            let expectedVersion: Int? = switch statement.kind {
            case .create: nil
            case .revoke, .rotate: previous.fmkVersion + 1
            default: previous.fmkVersion
            }
            guard statement.fmkVersion == expectedVersion else {
                throw fail(.versionGap, statement.seq, "statement \(statement.seq) (\(statement.kind.rawValue)) names FMK v\(statement.fmkVersion) after v\(previous.fmkVersion)")
            }
            guard statement.signerIdentityKey == previous.ownerIdentityKey, statement.ownerUserID == previous.ownerUserID else {
                throw fail(.unknownSigner, statement.seq, "statement \(statement.seq) is not signed by the family member's owner key")
            }
            guard signed.hasValidSignature() else {
                throw fail(.badSignature, statement.seq, "statement \(statement.seq)'s signature does not verify")
            }
            guard statement.kind != .rekey || signed.hasValidNewOwnerSignature() else {
                throw fail(.badSignature, statement.seq, "statement \(statement.seq) (rekey) is not signed by the new owner key it names")
            }
            if statement.kind == .rekey {
                try checkRekeyGoverned(signed, after: previous, now: now, fail: fail)
            }
            if statement.kind == .transfer, !signed.isApprovedAtOnce(under: previous.ownerRecoveryKey) {
                guard let notBefore = statement.notBefore,
                    notBefore.timeIntervalSince(statement.issuedAt) >= KeyStatement.minimumDelay
                else {
                    throw fail(.ungovernedChange, statement.seq, "statement \(statement.seq) (transfer) names no security delay and is approved neither by the owner's recovery key nor by two devices it certified")
                }
                guard notBefore <= now.addingTimeInterval(KeyStatement.clockTolerance) else {
                    throw fail(.ungovernedChange, statement.seq, "statement \(statement.seq) (transfer) takes effect at \(Timestamp.format(notBefore)), not yet: the grant service applied it before its security delay ran out")
                }
            }
            // A rotation revokes nobody and adds nobody: exactly the holders of the version before.
            if statement.kind == .rotate,
                Set(statement.holders.map(\.userID)) != Set(previous.head.statement.holders.map(\.userID))
            {
                throw fail(.malformed, statement.seq, "statement \(statement.seq) (rotate) names other holders than the version before")
            }
            var next = previous
            next.head = signed
            next.headHash = try signed.hash()
            if statement.kind == .transfer || statement.kind == .rekey, let newOwner = statement.newOwner {
                guard statement.kind == .transfer || newOwner.userID == previous.ownerUserID else {
                    throw fail(.malformed, statement.seq, "a rekey statement names another user")
                }
                next.ownerIdentityKey = newOwner.identityPublicKey
                next.ownerUserID = newOwner.userID
            }
            switch statement.kind {
            case .transfer: next.ownerRecoveryKey = nil  // the new owner names theirs when adopting
            case .adopt: next.ownerRecoveryKey = statement.recoveryPublicKey
            default: break
            }
            state = next
        }
        guard let state else {
            throw fail(.versionGap, nil, "the service sent no key history for this family member")
        }
        return state
    }

    /// A `rekey` follows the owner's identity rotation, which it carries: signed by the key the
    /// history pins and by the key the rekey names, and either approved by the recovery key the
    /// history names (its signature, or two devices it certified: `isApprovedAtOnce`) or begun
    /// `KeyStatement.minimumDelay` ago by this client's clock. A thief's rotation that a grant
    /// service applied early therefore moves the family member for nobody, while the owner's other
    /// devices can still veto it: the thief holds one device's key, never two.
    private static func checkRekeyGoverned(
        _ signed: SignedKeyStatement, after previous: KeyHistoryStore.Entry, now: Date,
        fail: (KeyChainViolation.Code, Int?, String) -> KeyHistoryError
    ) throws {
        let seq = signed.statement.seq
        guard let rotation = signed.rotation, rotation.statement.userID == previous.ownerUserID,
            rotation.statement.previousIdentityPublicKey == previous.ownerIdentityKey,
            rotation.statement.identityPublicKey == signed.statement.newOwner?.identityPublicKey
        else {
            throw fail(.ungovernedChange, seq, "statement \(seq) (rekey) does not carry the owner's identity rotation to the key it names")
        }
        guard rotation.hasValidSignatures() else {
            throw fail(.badSignature, seq, "the identity rotation statement \(seq) (rekey) carries is not signed by both keys")
        }
        guard !rotation.isApprovedAtOnce(under: previous.ownerRecoveryKey) else { return }
        let effective = rotation.rekeyFloor
        guard effective <= now.addingTimeInterval(KeyStatement.clockTolerance) else {
            throw fail(
                .ungovernedChange, seq,
                "statement \(seq) (rekey) follows an identity rotation begun at \(Timestamp.format(rotation.statement.issuedAt)) "
                    + "that neither the owner's recovery key nor two devices it certified approved: not before \(Timestamp.format(effective)) "
                    + "(the grant service applied it before its security delay ran out)")
        }
    }
}
