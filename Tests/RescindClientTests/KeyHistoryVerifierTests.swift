import Foundation
import RescindClient
import RescindCrypto
import RescindProtocol
import RescindTestSupport
import Testing

/// `KeyHistoryVerifier` on hand-made chains, no server: every rule refuses with its own code, and
/// an honest chain passes.
@Suite struct KeyHistoryVerifierTests {
    /// An owner making statements for one family member, and the keys it wraps for.
    struct Chain {
        let id = UUID()
        var owner = UserKeys.generate()
        var fmks: [Int: SecretKey] = [1: SecretKey(), 2: SecretKey(), 3: SecretKey(), 4: SecretKey()]
        var statements: [SignedKeyStatement] = []

        func fingerprint(_ keys: UserKeys) -> Data {
            KeyStatement.fingerprint(ofAgreementKey: Data(keys.agreementKey.publicKey.rawRepresentation))
        }

        func wrapped(for keys: UserKeys, version: Int, fmk: SecretKey? = nil) throws -> WrappedKeyResponse {
            let key = fmk ?? fmks[version]!
            if keys.userID == owner.userID {
                let bytes = try FMKWrapping.wrapForOwner(key, familyMemberID: id, version: UInt32(version), masterKey: keys.masterKey)
                return WrappedKeyResponse(
                    familyMemberID: id, fmkVersion: version, wrapping: .self, wrappedFMK: Data(bytes), grantedByUserID: owner.userID)
            }
            let bytes = try FMKWrapping.wrap(
                key, familyMemberID: id, version: UInt32(version), granter: owner.agreementKey, grantee: keys.agreementKey.publicKey)
            return WrappedKeyResponse(
                familyMemberID: id, fmkVersion: version, wrapping: .ecdh, wrappedFMK: Data(bytes), grantedByUserID: owner.userID,
                granterAgreementPublicKey: Data(owner.agreementKey.publicKey.rawRepresentation))
        }

        func holder(_ wrapped: WrappedKeyResponse, _ keys: UserKeys) -> KeyStatement.Holder {
            KeyStatement.Holder(
                userID: keys.userID, wrapping: wrapped.wrapping, agreementKeyFingerprint: fingerprint(keys),
                wrappedFMKHash: KeyStatement.wrappedHash(wrapped.wrappedFMK))
        }

        /// Appends a statement; `edit` changes it before it is signed by `signer` (default the owner).
        @discardableResult
        mutating func append(
            _ kind: KeyStatement.Kind, holders: [KeyStatement.Holder], version: Int? = nil, revoked: UUID? = nil,
            newOwner: KeyStatement.NewOwner? = nil, signer: Ed25519.PrivateKey? = nil, edit: (inout KeyStatement) -> Void = { _ in }
        ) throws -> SignedKeyStatement {
            let last = statements.last?.statement
            let v = version ?? last?.fmkVersion ?? 1
            if fmks[v] == nil { fmks[v] = SecretKey() }
            let key = signer ?? owner.identityKey
            var statement = KeyStatement(
                familyMemberID: id, seq: (last?.seq ?? 0) + 1, kind: kind, fmkVersion: v,
                previousHash: try statements.last?.hash(), ownerUserID: last.map { _ in currentOwner } ?? owner.userID,
                signerIdentityKey: Data(key.publicKey.rawRepresentation), holders: holders, revokedUserID: revoked,
                newOwner: newOwner, fmkCommitment: Data(FMKCommitment.commit(fmks[v]!, familyMemberID: id, version: UInt32(v))),
                issuedAt: Date())
            edit(&statement)
            let signed = SignedKeyStatement(statement: statement, signature: Data(key.signature(for: try statement.signingInput())))
            statements.append(signed)
            return signed
        }

        var currentOwner: UUID {
            var owner = self.owner.userID
            for signed in statements where signed.statement.kind == .transfer { owner = signed.statement.newOwner!.userID }
            return owner
        }

        func verify(
            as keys: UserKeys, cached: KeyHistoryStore.Entry? = nil, statements: [SignedKeyStatement]? = nil,
            wrapped: WrappedKeyResponse, registered: Data? = nil, now: Date = Date()
        ) async throws -> KeyHistoryStore.Entry {
            let session = keys
            return try await KeyHistoryVerifier.verify(
                familyMemberID: id, cached: cached, statements: statements ?? self.statements, wrapped: wrapped, me: keys.userID,
                myAgreementFingerprint: fingerprint(keys),
                registeredOwnerKey: { _ in registered ?? Data(owner.identityKey.publicKey.rawRepresentation) },
                unwrap: { wrapped in
                    switch wrapped.wrapping {
                    case .self:
                        try FMKWrapping.unwrapForOwner(
                            [UInt8](wrapped.wrappedFMK), familyMemberID: wrapped.familyMemberID, version: UInt32(wrapped.fmkVersion),
                            masterKey: session.masterKey)
                    case .ecdh:
                        try FMKWrapping.unwrap(
                            [UInt8](wrapped.wrappedFMK), familyMemberID: wrapped.familyMemberID, version: UInt32(wrapped.fmkVersion),
                            grantee: session.agreementKey,
                            granter: try X25519.PublicKey(rawRepresentation: [UInt8](wrapped.granterAgreementPublicKey!)))
                    }
                }, now: now
            ).entry
        }
    }

    /// A chain: create (naming the owner's `recoveryKey`, if any), grant to B. Returns it with B's
    /// wrapped key at the head.
    static func honest(recoveryKey: Ed25519.PrivateKey? = nil) throws -> (Chain, UserKeys, WrappedKeyResponse) {
        var chain = Chain()
        let b = UserKeys.generate()
        let ownCopy = try chain.wrapped(for: chain.owner, version: 1)
        try chain.append(.create, holders: [chain.holder(ownCopy, chain.owner)]) {
            $0.recoveryPublicKey = recoveryKey.map { Data($0.publicKey.rawRepresentation) }
        }
        let bCopy = try chain.wrapped(for: b, version: 1)
        try chain.append(.grant, holders: [chain.holder(ownCopy, chain.owner), chain.holder(bCopy, b)])
        return (chain, b, bCopy)
    }

    @Test func anHonestChainIsAcceptedIncrementally() async throws {
        var (chain, b, bCopy) = try Self.honest()
        let entry = try await chain.verify(as: b, wrapped: bCopy)
        #expect(entry.seq == 2 && entry.fmkVersion == 1 && entry.ownerIdentityKey == Data(chain.owner.identityKey.publicKey.rawRepresentation))
        // The owner's own view.
        _ = try await chain.verify(as: chain.owner, wrapped: try chain.wrapped(for: chain.owner, version: 1))
        // A revocation of nobody else: v2 for both, verified from the cached head with one new statement.
        let own2 = try chain.wrapped(for: chain.owner, version: 2), b2 = try chain.wrapped(for: b, version: 2)
        try chain.append(.revoke, holders: [chain.holder(own2, chain.owner), chain.holder(b2, b)], version: 2, revoked: UUID())
        let next = try await chain.verify(as: b, cached: entry, statements: Array(chain.statements.suffix(1)), wrapped: b2)
        #expect(next.seq == 3 && next.fmkVersion == 2)
        // Nothing new: the cached head and the same key.
        #expect(try await chain.verify(as: b, cached: next, statements: [], wrapped: b2) == next)
        // A repeat that passes through the head is fine.
        #expect(try await chain.verify(as: b, cached: next, statements: chain.statements, wrapped: b2) == next)
    }

    @Test func aBadSignatureABrokenLinkAVersionGapAnUnknownSignerAreRefused() async throws {
        let (base, b, bCopy) = try Self.honest()
        var chain = base
        chain.statements[1].signature[0] ^= 1
        await expectKeyHistoryRefused(.badSignature) { _ = try await chain.verify(as: b, wrapped: bCopy) }

        chain = base
        chain.statements.removeLast()
        let ownCopy = try chain.wrapped(for: chain.owner, version: 1)
        try chain.append(.grant, holders: [chain.holder(ownCopy, chain.owner), chain.holder(bCopy, b)]) {
            $0.previousHash = Data(repeating: 7, count: 32)
        }
        await expectKeyHistoryRefused(.brokenLink) { _ = try await chain.verify(as: b, wrapped: bCopy) }

        chain = base
        let skipped = try chain.wrapped(for: b, version: 3)
        try chain.append(.revoke, holders: [chain.holder(skipped, b)], version: 3, revoked: chain.owner.userID)
        await expectKeyHistoryRefused(.versionGap) { _ = try await chain.verify(as: b, wrapped: skipped) }

        chain = base
        chain.statements.remove(at: 1)  // seq 1 then seq 3
        try chain.append(.grant, holders: [chain.holder(ownCopy, chain.owner), chain.holder(bCopy, b)]) { $0.seq = 3 }
        await expectKeyHistoryRefused(.versionGap) { _ = try await chain.verify(as: b, wrapped: bCopy) }

        chain = base
        let attacker = Ed25519.PrivateKey()
        try chain.append(.grant, holders: [chain.holder(ownCopy, chain.owner), chain.holder(bCopy, b)], signer: attacker)
        await expectKeyHistoryRefused(.unknownSigner) { _ = try await chain.verify(as: b, wrapped: bCopy) }

        // A history that does not start with the owner's create.
        chain = base
        chain.statements.removeFirst()
        await expectKeyHistoryRefused(.versionGap) { _ = try await chain.verify(as: b, wrapped: bCopy) }
    }

    @Test func malformedAndHugeStatementsAreRefused() async throws {
        var (chain, b, bCopy) = try Self.honest()
        let ownCopy = try chain.wrapped(for: chain.owner, version: 1)
        let many = (0..<1_001).map { _ in
            KeyStatement.Holder(userID: UUID(), wrapping: .ecdh, agreementKeyFingerprint: Data(count: 32), wrappedFMKHash: Data(count: 32))
        }
        try chain.append(.grant, holders: [chain.holder(ownCopy, chain.owner), chain.holder(bCopy, b)] + many)
        await expectKeyHistoryRefused(.malformed) { _ = try await chain.verify(as: b, wrapped: bCopy) }
        chain.statements.removeLast()
        try chain.append(.grant, holders: [chain.holder(bCopy, b)]) { $0.fmkCommitment = Data(count: 3) }
        await expectKeyHistoryRefused(.malformed) { _ = try await chain.verify(as: b, wrapped: bCopy) }
    }

    @Test func rollbackForkStaleVersionStrangerMismatchAndCommitmentAreRefused() async throws {
        var (chain, b, bCopy) = try Self.honest()
        let own2 = try chain.wrapped(for: chain.owner, version: 2), b2 = try chain.wrapped(for: b, version: 2)
        try chain.append(.revoke, holders: [chain.holder(own2, chain.owner), chain.holder(b2, b)], version: 2, revoked: UUID())
        let head = try await chain.verify(as: b, wrapped: b2)

        // Rollback: an answer ending below the verified head.
        await expectKeyHistoryRefused(.rollback) {
            _ = try await chain.verify(as: b, cached: head, statements: Array(chain.statements.prefix(2)), wrapped: bCopy)
        }
        // An old version served as current, with no statement.
        await expectKeyHistoryRefused(.staleVersion) { _ = try await chain.verify(as: b, cached: head, statements: [], wrapped: bCopy) }

        // Fork: another statement 3 (a different v2) to a device that verified the first.
        var other = chain
        other.statements.removeLast()
        other.fmks[2] = SecretKey()
        let forkCopy = try other.wrapped(for: b, version: 2)
        try other.append(.revoke, holders: [other.holder(forkCopy, b)], version: 2, revoked: chain.owner.userID)
        await expectKeyHistoryRefused(.fork) { _ = try await other.verify(as: b, cached: head, statements: other.statements, wrapped: forkCopy) }
        // … and one extending it.
        try other.append(.grant, holders: [other.holder(forkCopy, b)])
        await expectKeyHistoryRefused(.fork) {
            _ = try await other.verify(as: b, cached: head, statements: Array(other.statements.suffix(1)), wrapped: forkCopy)
        }

        // A user the head does not name (a grant the owner never made).
        let stranger = UserKeys.generate()
        await expectKeyHistoryRefused(.notAHolder) { _ = try await chain.verify(as: stranger, wrapped: try chain.wrapped(for: stranger, version: 2)) }

        // A wrapped key replaced by one for a key the attacker knows (it is not the one named).
        await expectKeyHistoryRefused(.wrappedKeyMismatch) {
            _ = try await chain.verify(as: b, wrapped: try chain.wrapped(for: b, version: 2, fmk: SecretKey()))
        }

        // The owner's statement names the copy, but the copy is of another key than committed.
        var bad = try Self.honest().0
        let wrong = try bad.wrapped(for: b, version: 1, fmk: SecretKey())
        let ownCopy = try bad.wrapped(for: bad.owner, version: 1)
        bad.statements.removeLast()
        try bad.append(.grant, holders: [bad.holder(ownCopy, bad.owner), bad.holder(wrong, b)])
        await expectKeyHistoryRefused(.commitmentMismatch) { _ = try await bad.verify(as: b, wrapped: wrong) }
    }

    @Test func aTransferHandsTheChainToTheNewOwnersKeyAndARotatedGranteeIsCheckedByTheCommitment() async throws {
        var (chain, b, bCopy) = try Self.honest()
        let ownCopy = try chain.wrapped(for: chain.owner, version: 1)
        try chain.append(
            .transfer, holders: [chain.holder(ownCopy, chain.owner), chain.holder(bCopy, b)],
            newOwner: KeyStatement.NewOwner(userID: b.userID, identityPublicKey: Data(b.identityKey.publicKey.rawRepresentation))
        ) { $0.notBefore = $0.issuedAt.addingTimeInterval(KeyStatement.minimumDelay) }
        let later = Date().addingTimeInterval(2 * KeyStatement.minimumDelay)
        let bSelf = try FMKWrapping.wrapForOwner(chain.fmks[1]!, familyMemberID: chain.id, version: 1, masterKey: b.masterKey)
        let adopted = WrappedKeyResponse(familyMemberID: chain.id, fmkVersion: 1, wrapping: .self, wrappedFMK: Data(bSelf), grantedByUserID: b.userID)
        var withAdopt = chain
        try withAdopt.append(.adopt, holders: [chain.holder(ownCopy, chain.owner), withAdopt.holder(adopted, b)], signer: b.identityKey)
        _ = try await withAdopt.verify(as: b, wrapped: adopted, registered: Data(b.identityKey.publicKey.rawRepresentation), now: later)
        // The old owner can no longer sign.
        var stale = chain
        try stale.append(.grant, holders: [chain.holder(ownCopy, chain.owner), chain.holder(bCopy, b)]) { $0.ownerUserID = b.userID }
        await expectKeyHistoryRefused(.unknownSigner) {
            _ = try await stale.verify(as: b, wrapped: bCopy, registered: Data(b.identityKey.publicKey.rawRepresentation), now: later)
        }
        // First use: the owner's registered key is not the one the history ends at.
        await expectKeyHistoryRefused(.identityKeyChanged) {
            _ = try await chain.verify(as: b, wrapped: bCopy, registered: Data(Ed25519.PrivateKey().publicKey.rawRepresentation), now: later)
        }

        // B rotated its X25519 key and re-wrapped its own copy (no owner statement): accepted by the commitment.
        let (plain, c, cCopy) = try Self.honest()
        let rotated = UserKeys(userID: c.userID, agreementKey: X25519.PrivateKey(), identityKey: c.identityKey, masterKey: c.masterKey)
        let rewrapped = try FMKWrapping.wrap(
            plain.fmks[1]!, familyMemberID: plain.id, version: 1, granter: rotated.agreementKey, grantee: plain.owner.agreementKey.publicKey)
        var moved = cCopy
        moved.wrappedFMK = Data(rewrapped)
        _ = try await plain.verify(as: rotated, wrapped: moved)
        // … but not a key the owner never committed to.
        let forged = try FMKWrapping.wrap(
            SecretKey(), familyMemberID: plain.id, version: 1, granter: rotated.agreementKey, grantee: plain.owner.agreementKey.publicKey)
        moved.wrappedFMK = Data(forged)
        await expectKeyHistoryRefused(.commitmentMismatch) { _ = try await plain.verify(as: rotated, wrapped: moved) }
    }

    /// The security delay is the verifier's: a `transfer` takes effect at its own `not_before`
    /// (by this client's clock), at least an hour after it was signed, or at once with the
    /// owner's recovery key named in the owner's `create` statement. A service serving it earlier
    /// — a compromised one applying a pending transfer — is refused.
    @Test func aTransferTakesEffectAfterItsOwnDelayOrWithTheOwnersRecoveryKey() async throws {
        let recovery = Ed25519.PrivateKey()
        let (chain, b, bCopy) = try Self.honest(recoveryKey: recovery)
        let ownCopy = try chain.wrapped(for: chain.owner, version: 1)
        let toB = KeyStatement.NewOwner(userID: b.userID, identityPublicKey: Data(b.identityKey.publicKey.rawRepresentation))
        let holders = [chain.holder(ownCopy, chain.owner), chain.holder(bCopy, b)]
        let registeredB = Data(b.identityKey.publicKey.rawRepresentation)

        func transfer(_ edit: @escaping (inout KeyStatement) -> Void, recoverySigner: Ed25519.PrivateKey? = nil) throws -> Chain {
            var next = chain
            var signed = try next.append(.transfer, holders: holders, newOwner: toB, edit: edit)
            if let recoverySigner {
                signed.recoverySignature = Data(recoverySigner.signature(for: try signed.statement.signingInput()))
                next.statements[next.statements.count - 1] = signed
            }
            return next
        }
        let delayed = try transfer { $0.notBefore = $0.issuedAt.addingTimeInterval(KeyStatement.minimumDelay) }
        // Served at once: refused by this client's clock; after the delay: the new owner's.
        await expectKeyHistoryRefused(.ungovernedChange) { _ = try await delayed.verify(as: b, wrapped: bCopy, registered: registeredB) }
        let later = Date().addingTimeInterval(KeyStatement.minimumDelay + 1)
        #expect(try await delayed.verify(as: b, wrapped: bCopy, registered: registeredB, now: later).ownerUserID == b.userID)

        // No delay named, or a shorter one than the floor: refused whatever the clock says.
        for edit: (inout KeyStatement) -> Void in [{ _ in }, { $0.notBefore = $0.issuedAt.addingTimeInterval(KeyStatement.minimumDelay - 1) }] {
            let undelayed = try transfer(edit)
            await expectKeyHistoryRefused(.ungovernedChange) {
                _ = try await undelayed.verify(as: b, wrapped: bCopy, registered: registeredB, now: later.addingTimeInterval(86_400))
            }
        }
        // The recovery key the owner's create statement names makes it take effect at once …
        let approved = try transfer({ $0.notBefore = $0.issuedAt.addingTimeInterval(KeyStatement.minimumDelay) }, recoverySigner: recovery)
        #expect(try await approved.verify(as: b, wrapped: bCopy, registered: registeredB).ownerUserID == b.userID)
        // … another key does not (a thief's own, or the grant service's).
        let forged = try transfer({ $0.notBefore = $0.issuedAt.addingTimeInterval(KeyStatement.minimumDelay) }, recoverySigner: Ed25519.PrivateKey())
        await expectKeyHistoryRefused(.ungovernedChange) { _ = try await forged.verify(as: b, wrapped: bCopy, registered: registeredB) }

        // A history whose owner named no recovery key takes a transfer only after its delay.
        var (unnamed, c, cCopy) = try Self.honest()
        try unnamed.append(
            .transfer, holders: [unnamed.holder(try unnamed.wrapped(for: unnamed.owner, version: 1), unnamed.owner), unnamed.holder(cCopy, c)],
            newOwner: KeyStatement.NewOwner(userID: c.userID, identityPublicKey: Data(c.identityKey.publicKey.rawRepresentation))
        ) { $0.notBefore = $0.issuedAt.addingTimeInterval(KeyStatement.minimumDelay) }
        var signed = unnamed.statements.removeLast()
        signed.recoverySignature = Data(recovery.signature(for: try signed.statement.signingInput()))
        unnamed.statements.append(signed)
        await expectKeyHistoryRefused(.ungovernedChange) {
            _ = try await unnamed.verify(as: c, wrapped: cCopy, registered: Data(c.identityKey.publicKey.rawRepresentation))
        }
        // `not_before` and `recovery_public_key` only where they belong.
        var misplaced = chain
        try misplaced.append(.grant, holders: holders) { $0.notBefore = $0.issuedAt.addingTimeInterval(KeyStatement.minimumDelay) }
        await expectKeyHistoryRefused(.malformed) { _ = try await misplaced.verify(as: b, wrapped: bCopy) }
    }
}

extension KeyHistoryVerifierTests {
    /// The owner's identity rotation moves a family member through a `rekey` that carries the
    /// rotation: taken once the rotation is an hour old by this client's clock, or at once when
    /// the recovery key the owner's `create` statement names signed it. Without the rotation, with
    /// one to other keys or from another key, or signed by another recovery key, it is refused —
    /// so a grant service that applies a thief's rotation early moves the family member for nobody.
    @Test func aRekeyFollowsTheOwnersRotationAnHourOnOrWithTheRecoveryKey() async throws {
        let recovery = Ed25519.PrivateKey()
        let (chain, b, bCopy) = try Self.honest(recoveryKey: recovery)
        let old = chain.owner
        let new = UserKeys.generate(userID: old.userID)
        let registered = Data(new.identityKey.publicKey.rawRepresentation)

        func rotation(to keys: UserKeys, from previous: UserKeys = old, issuedAt: Date = Date(), recoverySigner: Ed25519.PrivateKey? = nil) throws -> IdentityRotation {
            let statement = IdentityRotationStatement(
                userID: old.userID, generation: 2, previousIdentityPublicKey: Data(previous.identityKey.publicKey.rawRepresentation),
                identityPublicKey: Data(keys.identityKey.publicKey.rawRepresentation),
                agreementPublicKey: Data(keys.agreementKey.publicKey.rawRepresentation), issuedAt: Timestamp.truncated(issuedAt))
            let input = try statement.signingInput()
            return IdentityRotation(
                statement: statement, previousKeySignature: Data(previous.identityKey.signature(for: input)),
                newKeySignature: Data(keys.identityKey.signature(for: input)),
                recoverySignature: recoverySigner.map { Data($0.signature(for: input)) })
        }
        /// The chain with the owner's rekey to `new`, carrying `carried`.
        func rekeyed(_ carried: IdentityRotation?) throws -> Chain {
            var next = chain
            let newCopy = try chain.wrapped(for: new, version: 1)  // the same user: a self copy under the new master key
            var signed = try next.append(
                .rekey, holders: [next.holder(newCopy, new), next.holder(bCopy, b)],
                newOwner: KeyStatement.NewOwner(userID: old.userID, identityPublicKey: registered), signer: old.identityKey)
            signed.newOwnerSignature = Data(new.identityKey.signature(for: try signed.statement.signingInput()))
            signed.rotation = carried
            next.statements[next.statements.count - 1] = signed
            return next
        }
        let anHourOn = Date().addingTimeInterval(KeyStatement.minimumDelay + 1)

        // Begun just now, by one device: refused until an hour has passed by this client's clock.
        let fresh = try rekeyed(try rotation(to: new))
        await expectKeyHistoryRefused(.ungovernedChange) { _ = try await fresh.verify(as: b, wrapped: bCopy, registered: registered) }
        #expect(try await fresh.verify(as: b, wrapped: bCopy, registered: registered, now: anHourOn).ownerIdentityKey == registered)
        // Begun an hour ago (the security delay ran out, or a second device approved it an hour on): taken now.
        let aged = try rekeyed(try rotation(to: new, issuedAt: Date().addingTimeInterval(-KeyStatement.minimumDelay - 1)))
        #expect(try await aged.verify(as: b, wrapped: bCopy, registered: registered).ownerIdentityKey == registered)
        // Approved by the recovery key the history names: taken at once; by another key: not.
        let approved = try rekeyed(try rotation(to: new, recoverySigner: recovery))
        #expect(try await approved.verify(as: b, wrapped: bCopy, registered: registered).ownerIdentityKey == registered)
        let forged = try rekeyed(try rotation(to: new, recoverySigner: Ed25519.PrivateKey()))
        await expectKeyHistoryRefused(.ungovernedChange) { _ = try await forged.verify(as: b, wrapped: bCopy, registered: registered) }

        // No rotation carried, one to another key, or one from a key the history never named: refused for good.
        let thief = UserKeys.generate(userID: old.userID)
        for carried in [nil, try rotation(to: thief), try rotation(to: new, from: thief)] {
            let unproven = try rekeyed(carried)
            await expectKeyHistoryRefused(.ungovernedChange) {
                _ = try await unproven.verify(as: b, wrapped: bCopy, registered: registered, now: anHourOn.addingTimeInterval(86_400))
            }
        }
        // A rotation whose signatures do not verify.
        var unsigned = try rotation(to: new, recoverySigner: recovery)
        unsigned.newKeySignature = Data(repeating: 7, count: 64)
        let badlySigned = try rekeyed(unsigned)
        await expectKeyHistoryRefused(.badSignature) { _ = try await badlySigned.verify(as: b, wrapped: bCopy, registered: registered) }
    }
}
