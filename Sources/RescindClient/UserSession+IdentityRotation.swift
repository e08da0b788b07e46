import Foundation
import RescindCrypto
import RescindProtocol

/// Identity-key rotation (key-hierarchy ADR, phase 4), the client's side.
///
/// A rotation replaces all three of a user's keys — X25519, Ed25519 identity and master —
/// because a stolen device held all three. In order, each step safe to repeat:
/// 1. the caller stores the new keys beside the old ones (so a crash loses neither);
/// 2. `registerRotation` sends the statement signed by the old and the new identity key; the
///    service holds it as a governed operation until the security delay runs out or a second
///    device or the recovery key approves it (a thief with one device cannot rotate at once);
/// 3. `rewrapHeldKeys` re-wraps every FMK copy I hold for the new keys: my owner copies
///    under the new master key, granted copies from my new X25519 key to the granter's
///    (X25519 is symmetric, so the granter's copy of the secret is unchanged);
/// 4. the caller replaces the old keys with the new ones.
/// A crash after 2 is finished by running 3 and 4 again (`rewrapHeldKeys` skips what is
/// done). After 2 the service refuses any grant wrapped to the old key.
extension UserSession {
    /// The same device acting with other keys of the same user (before and after a rotation).
    public func withKeys(_ keys: UserKeys) -> UserSession {
        precondition(keys.userID == self.keys.userID, "a device belongs to one user")
        var session = UserSession(
            keys: keys, deviceID: deviceID, client: client, keyHistory: keyHistory, pins: pins, violationReporter: violationReporter)
        session.clock = clock
        session.uploadsInFlight = uploadsInFlight
        return session
    }

    /// The same session reporting refused key histories to `reporter` (the CLI's and tests' transport).
    public func reporting(to reporter: any KeyChainViolationReporting) -> UserSession {
        var session = UserSession(
            keys: keys, deviceID: deviceID, client: client, keyHistory: keyHistory, pins: pins, violationReporter: reporter)
        session.clock = clock
        session.uploadsInFlight = uploadsInFlight
        return session
    }

    private init(
        keys: UserKeys, deviceID: UUID, client: GrantServiceClient, keyHistory: KeyHistoryStore, pins: IdentityPins,
        violationReporter: any KeyChainViolationReporting
    ) {
        self.keys = keys
        self.deviceID = deviceID
        self.client = client
        self.keyHistory = keyHistory
        self.pins = pins
        self.violationReporter = violationReporter
    }

    /// Begins registering `newKeys` as this user's identity, signed by the current identity key
    /// and by the new one (and by this device's certified key, if it has a certificate), as the
    /// generation after `currentGeneration`: a governed operation, pending until the security delay
    /// runs out or a second device or the recovery key approves it.
    /// - Throws: `GrantServiceError` 409 `stale_rotation` if the identity moved on meanwhile,
    ///   409 `operation_pending` while another rotation waits, 403 `device_frozen`.
    public func registerRotation(
        to newKeys: UserKeys, currentGeneration: Int, now: Date = Date()
    ) async throws -> GovernedOperation {
        precondition(newKeys.userID == keys.userID, "a rotation keeps the user id")
        let statement = IdentityRotationStatement(
            userID: keys.userID, generation: currentGeneration + 1,
            previousIdentityPublicKey: Data(keys.identityKey.publicKey.rawRepresentation),
            identityPublicKey: Data(newKeys.identityKey.publicKey.rawRepresentation),
            agreementPublicKey: Data(newKeys.agreementKey.publicKey.rawRepresentation),
            issuedAt: Date(timeIntervalSince1970: (now.timeIntervalSince1970 * 1000).rounded(.down) / 1000))
        let input = try statement.signingInput()
        let me = try await client.me()
        // The new identity key vouches for the recovery key the current one vouched for, so that
        // my clients keep naming it after the rotation; an unbound one stays unbound.
        let binding = try Self.verifiedRecoveryPublicKey(of: me.user, keys: keys).map {
            try RecoveryKeyBinding.sign(userID: keys.userID, identityKey: newKeys.identityKey, recoveryPublicKey: $0)
        }
        // This device's certified approval, if it has a certificate: a second certified device's
        // then makes the rotation immediate.
        let approval = deviceApproval(of: input, me: me)
        return try await client.rotateIdentity(
            IdentityRotation(
                statement: statement, previousKeySignature: Data(keys.identityKey.signature(for: input)),
                newKeySignature: Data(newKeys.identityKey.signature(for: input)), recoveryBinding: binding,
                deviceApprovals: approval.map { [$0] }))
    }

    /// Begins setting `newKey` as my user's recovery key (in place of the current one, if any):
    /// a governed operation, pending for the security delay unless a second device or the
    /// current recovery key approves it (`RecoveryKey.order(.approve, …)`).
    public func setRecoveryKey(_ newKey: RecoveryKey) async throws -> GovernedOperation {
        let current = try await client.me().user.recoveryPublicKey
        let input = try RecoveryKeyChange.signingInput(
            userID: keys.userID, recoveryPublicKey: newKey.publicKey, previousRecoveryPublicKey: current)
        return try await client.setRecoveryKey(
            RecoveryKeyChange(
                userID: keys.userID, recoveryPublicKey: newKey.publicKey, previousRecoveryPublicKey: current,
                signature: Data(newKey.signingKey.signature(for: input)),
                recoveryBinding: try RecoveryKeyBinding.sign(userID: keys.userID, identityKey: keys.identityKey, recoveryPublicKey: newKey.publicKey)))
    }

    /// My user's recovery public key, if the service shows my identity key's binding of it
    /// (`RecoveryKeyBinding`); nil when it shows none, or one my key did not make. Only this key
    /// goes into a statement I sign: a key the service swapped in is never named.
    public func verifiedRecoveryPublicKey() async throws -> Data? {
        Self.verifiedRecoveryPublicKey(of: try await client.me().user, keys: keys)
    }

    /// `user`'s recovery public key if `keys`' identity key bound it to `user`.
    public static func verifiedRecoveryPublicKey(of user: UserResponse, keys: UserKeys) -> Data? {
        guard user.userID == keys.userID, let recoveryKey = user.recoveryPublicKey, let binding = user.recoveryBinding,
              RecoveryKeyBinding.isValid(
                binding, userID: keys.userID, identityPublicKey: Data(keys.identityKey.publicKey.rawRepresentation),
                recoveryPublicKey: recoveryKey)
        else { return nil }
        return recoveryKey
    }

    /// Re-wraps every FMK copy I hold that does not open with my keys (this session's, the new
    /// ones) but opens with `previous`: after a rotation, each copy is moved to the new keys.
    /// Copies already moved are left alone, so this is safe to run again after a crash.
    ///
    /// Nothing is moved before every family member I own can follow the new key: a `rekey` is
    /// taken by verifiers only once the rotation is `KeyStatement.minimumDelay` old, or at once
    /// when the recovery key that family member's history names approved it (`KeyHistoryVerifier`).
    /// - Parameter only: just these family members (tests of a rotation interrupted half-way).
    /// - Returns: how many copies were re-wrapped, and how many were already current.
    /// - Throws: `AgentError` `.rotationNotDue` (nothing moved) while a rekey would be refused.
    @discardableResult
    public func rewrapHeldKeys(from previous: UserKeys, only: Set<UUID>? = nil) async throws -> (rewrapped: Int, current: Int) {
        let old = withKeys(previous)
        var current = 0
        var replacements: [(familyMemberID: UUID, request: ReplaceKeyRequest)] = []
        var rotation: IdentityRotation?
        var notBefore: Date?
        for member in try await client.familyMembers() where only?.contains(member.familyMemberID) ?? true {
            let wrapped: WrappedKeyResponse
            do {
                wrapped = try await client.wrappedKey(
                    member.familyMemberID, knownSeq: keyHistory.entry(member.familyMemberID)?.seq ?? 0)
            } catch let error as GrantServiceError where error.status == 403 {
                continue  // no active grant (revoked meanwhile): nothing to move
            }
            if (try? unwrap(wrapped)) != nil {
                _ = try await verify(wrapped)  // moved already: still only a key the owner issued
                current += 1
                continue
            }
            // Verified with the keys it was wrapped for.
            let verified = try await old.verify(wrapped)
            if wrapped.wrapping == .self {
                if rotation == nil { rotation = try await myRotation(from: previous) }
                if let due = Self.rekeyDue(rotation!, recoveryKey: verified.entry.ownerRecoveryKey, now: clock()) {
                    notBefore = max(notBefore ?? due, due)
                }
            }
            replacements.append((wrapped.familyMemberID, try replacement(for: wrapped, verified: verified, previous: previous)))
        }
        if let notBefore {
            throw AgentError(
                .rotationNotDue,
                "your identity rotation took effect, but the family members you own follow the new keys only from "
                    + "\(Timestamp.format(notBefore)) on (neither the recovery key their history names nor two devices it certified approved it): "
                    + "nothing was moved; run it again then")
        }
        var rewrapped = 0
        for (familyMemberID, request) in replacements {
            do {
                _ = try await client.replaceKey(familyMemberID, request)
                rewrapped += 1
            } catch let error as GrantServiceError where error.code == "version_conflict" || error.status == 403 {
                // A revocation committed meanwhile: its new version was wrapped for my current key, or I lost access.
                continue
            }
        }
        return (rewrapped, current)
    }

    /// The registered rotation from `previous`'s identity key to mine, as the service lists it.
    private func myRotation(from previous: UserKeys) async throws -> IdentityRotation {
        let mine = Data(keys.identityKey.publicKey.rawRepresentation)
        let from = Data(previous.identityKey.publicKey.rawRepresentation)
        guard let rotation = try await client.identityRotations(of: keys.userID).first(where: {
            $0.statement.identityPublicKey == mine && $0.statement.previousIdentityPublicKey == from
        }) else {
            throw AgentError(.serviceRefused, "the grant service lists no rotation of your identity to these keys: nothing was moved")
        }
        return rotation
    }

    /// When a `rekey` following `rotation` is taken by verifiers, if not `now`: nil when the
    /// recovery key the history names approved the rotation (or two devices it certified), or it
    /// is old enough.
    static func rekeyDue(_ rotation: IdentityRotation, recoveryKey: Data?, now: Date) -> Date? {
        guard !rotation.isApprovedAtOnce(under: recoveryKey) else { return nil }
        return rotation.rekeyFloor <= now ? nil : rotation.rekeyFloor
    }

    /// The copy of `wrapped` moved to my keys: a self copy with a `rekey` statement signed by the
    /// old identity key and the new, a granted copy re-wrapped to the granter's key.
    private func replacement(
        for wrapped: WrappedKeyResponse, verified: VerifiedKey, previous: UserKeys
    ) throws -> ReplaceKeyRequest {
        let fmk = verified.fmk
        let version = UInt32(wrapped.fmkVersion)
        switch wrapped.wrapping {
        case .self:
            // My owner copy: a `rekey` statement, signed with my old identity key, names the new one.
            let copy = Data(try FMKWrapping.wrapForOwner(fmk, familyMemberID: wrapped.familyMemberID, version: version, masterKey: keys.masterKey))
            var statement = try nextStatement(
                after: verified.entry, kind: .rekey,
                holders: verified.entry.head.statement.holders.filter { $0.userID != keys.userID } + [ownHolder(copy)],
                newOwner: KeyStatement.NewOwner(userID: keys.userID, identityPublicKey: Data(keys.identityKey.publicKey.rawRepresentation)),
                signer: previous.identityKey)
            // And by the new key: only who holds it can move the family member to it.
            statement.newOwnerSignature = Data(keys.identityKey.signature(for: try statement.statement.signingInput()))
            return ReplaceKeyRequest(fmkVersion: wrapped.fmkVersion, wrapping: .self, wrappedFMK: copy, statement: statement)
        case .ecdh:
            // A granted copy: the owner cannot sign my re-wrap; verifiers check it by the commitment.
            guard let granterKey = wrapped.granterAgreementPublicKey else { throw CryptoError(.invalidInput) }
            let copy = try FMKWrapping.wrap(
                fmk, familyMemberID: wrapped.familyMemberID, version: version, granter: keys.agreementKey,
                grantee: try X25519.PublicKey(rawRepresentation: [UInt8](granterKey)))
            return ReplaceKeyRequest(
                fmkVersion: wrapped.fmkVersion, wrapping: .ecdh, wrappedFMK: Data(copy), granterAgreementPublicKey: granterKey)
        }
    }
}
