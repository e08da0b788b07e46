import Foundation
import RescindCrypto
import RescindProtocol
import RescindTLS

/// A user acting through one of their devices: the owner-side flows of the seeds
/// (create a family member, add records, share, revoke, re-grant, transfer).
/// All encryption and key wrapping happen here; the service sees only results.
public struct UserSession: Sendable {
    public let keys: UserKeys
    public let deviceID: UUID
    public let client: GrantServiceClient
    /// What this client verified of each family member's key history (every key it uses is
    /// checked against it: `verifiedKey`). In memory unless the caller gives a file-backed one.
    public let keyHistory: KeyHistoryStore
    /// The identity keys of the people this user deals with, as this client verified them
    /// (`verifiedRecipient` consults and extends them). In memory unless the caller gives a
    /// file-backed store (the CLI's profile).
    public let pins: IdentityPins
    /// Where refused key histories are reported.
    public let violationReporter: any KeyChainViolationReporting
    /// A revocation's upload batches in flight at once (default `UserSession.uploadsInFlight`).
    public var uploadsInFlight: Int = UserSession.uploadsInFlight
    /// This client's clock: a transfer's security delay is measured on it, never on the service's.
    public var clock: @Sendable () -> Date = { Date() }

    /// - Parameter tls: how the grant service is reached (default: HTTPS with the system's roots).
    /// - Parameter keyHistory: the verified key histories (default: a fresh in-memory store, so
    ///   every session verifies from the first statement).
    /// - Parameter pins: the pinned identities (default: a fresh in-memory store).
    public init(
        keys: UserKeys, deviceID: UUID, deviceKey: Ed25519.PrivateKey, baseURL: URL, tls: ClientTLS = .strict,
        keyHistory: KeyHistoryStore = KeyHistoryStore(), pins: IdentityPins = IdentityPins(),
        violationReporter: any KeyChainViolationReporting = DiscardingKeyChainViolationReporter()
    ) {
        self.keys = keys
        self.deviceID = deviceID
        self.client = GrantServiceClient(
            baseURL: baseURL, credentials: .init(deviceID: deviceID, signingKey: deviceKey), tls: tls)
        self.keyHistory = keyHistory
        self.pins = pins
        self.violationReporter = violationReporter
    }

    /// Registers the user with their public keys and this device.
    /// - Parameter recoveryKey: the user's recovery key, whose public half is registered (with its
    ///   signature, proving possession) and to which the user's keys are escrowed (`KeyBackup`);
    ///   the key itself is the caller's to show once and forget.
    /// - Parameter keyBackup: false leaves the backup and this device's certificate
    ///   (`certifyThisDevice`) to the caller, who must first keep the keys (a keystore), so that a
    ///   backup the service refuses never loses a registered identity.
    public static func register(
        keys: UserKeys, displayName: String, deviceID: UUID = UUID(), deviceName: String, deviceKind: DeviceKind? = nil,
        deviceRole: DeviceRole? = nil, deviceKey: Ed25519.PrivateKey = Ed25519.PrivateKey(), recoveryKey: RecoveryKey? = nil,
        keyBackup: Bool = true, baseURL: URL, tls: ClientTLS = .strict
    ) async throws -> UserSession {
        let request = try RegisterUserRequest.signed(
            keys: keys, displayName: displayName,
            device: RegisterDeviceRequest(
                deviceID: deviceID, name: deviceName, kind: deviceKind, role: deviceRole,
                signingPublicKey: Data(deviceKey.publicKey.rawRepresentation)),
            recoveryKey: recoveryKey)
        _ = try await GrantServiceClient(baseURL: baseURL, tls: tls).registerUser(request)
        let session = UserSession(keys: keys, deviceID: deviceID, deviceKey: deviceKey, baseURL: baseURL, tls: tls)
        if keyBackup, let recoveryKey {
            try await session.storeKeyBackup(with: recoveryKey)
            try await session.certifyThisDevice(with: recoveryKey)
        }
        return session
    }

    /// Adds another device to this user's account and returns a session on it. The
    /// enrolment is signed with the identity key over a fresh challenge from the service.
    public func addDevice(
        name: String, kind: DeviceKind? = nil, role: DeviceRole? = nil, deviceID: UUID = UUID(),
        deviceKey: Ed25519.PrivateKey = Ed25519.PrivateKey()
    ) async throws -> UserSession {
        let device = RegisterDeviceRequest(
            deviceID: deviceID, name: name, kind: kind, role: role, signingPublicKey: Data(deviceKey.publicKey.rawRepresentation))
        let challenge = try await client.enrolmentChallenge()
        _ = try await client.registerDevice(
            try DeviceEnrolment.request(userID: keys.userID, challenge: challenge, device: device) {
                keys.identityKey.signature(for: $0)
            })
        return UserSession(keys: keys, deviceID: deviceID, deviceKey: deviceKey, baseURL: client.baseURL, tls: client.tls)
    }

    // MARK: Keys

    /// Creates a family member with a fresh FMK v1 (owner copy wrapped under the master key).
    /// The create statement names my recovery public key, if I registered one and the service shows
    /// my identity key's binding of it: with it, the owner hands the family member over at once;
    /// without it, only after the security delay.
    public func createFamilyMember(id: UUID = UUID(), fmk: SecretKey = SecretKey()) async throws -> (familyMemberID: UUID, fmk: SecretKey) {
        let wrapped = Data(try FMKWrapping.wrapForOwner(fmk, familyMemberID: id, version: 1, masterKey: keys.masterKey))
        let statement = try signStatement(
            KeyStatement(
                familyMemberID: id, seq: 1, kind: .create, fmkVersion: 1, previousHash: nil, ownerUserID: keys.userID,
                signerIdentityKey: Data(keys.identityKey.publicKey.rawRepresentation),
                holders: [ownHolder(wrapped)], fmkCommitment: Data(FMKCommitment.commit(fmk, familyMemberID: id, version: 1)),
                issuedAt: Date(), recoveryPublicKey: try await verifiedRecoveryPublicKey()))
        _ = try await client.createFamilyMember(
            CreateFamilyMemberRequest(familyMemberID: id, wrappedFMK: wrapped, statement: statement))
        return (id, fmk)
    }

    /// Fetches my copy of the current FMK, verifies it against the owner-signed key history
    /// and unwraps it. A revoked user gets the service's 403.
    /// - Throws: `KeyHistoryError` (reported) when the history or the key is refused.
    public func currentFMK(_ familyMemberID: UUID) async throws -> (fmk: SecretKey, version: Int) {
        let verified = try await verifiedKey(familyMemberID)
        return (verified.fmk, verified.wrapped.fmkVersion)
    }

    /// Unwraps a wrapped FMK of mine, whichever way it was wrapped.
    public func unwrap(_ wrapped: WrappedKeyResponse) throws -> SecretKey {
        let version = UInt32(wrapped.fmkVersion)
        switch wrapped.wrapping {
        case .self:
            return try FMKWrapping.unwrapForOwner(
                [UInt8](wrapped.wrappedFMK), familyMemberID: wrapped.familyMemberID, version: version,
                masterKey: keys.masterKey)
        case .ecdh:
            guard let granterKey = wrapped.granterAgreementPublicKey else { throw CryptoError(.invalidInput) }
            return try FMKWrapping.unwrap(
                [UInt8](wrapped.wrappedFMK), familyMemberID: wrapped.familyMemberID, version: version,
                grantee: keys.agreementKey, granter: try X25519.PublicKey(rawRepresentation: [UInt8](granterKey)))
        }
    }

    /// Shares a family member: wraps the current FMK from my key to the grantee's, once the
    /// grantee's keys passed `verifiedRecipient` (a first grant pins them).
    /// - Parameter pins: the pins to check and extend (this session's by default).
    /// - Returns: the verification code both sides can compare (`A3-5F-2B`).
    /// - Throws: `KeyHistoryError` `.unverifiedRecipientKey` (reported) for keys this client did
    ///   not verify: nothing was granted.
    @discardableResult
    public func grant(_ familyMemberID: UUID, to granteeUserID: UUID, pins: IdentityPins? = nil) async throws -> String {
        let verified = try await verifiedKey(familyMemberID)
        let (fmk, version) = (verified.fmk, verified.wrapped.fmkVersion)
        let grantee = try await verifiedRecipient(granteeUserID, in: verified.entry, for: .grant, pins: pins)
        let granteeKey = try X25519.PublicKey(rawRepresentation: [UInt8](grantee.agreementPublicKey))
        let wrapped = Data(try FMKWrapping.wrap(
            fmk, familyMemberID: familyMemberID, version: UInt32(version), granter: keys.agreementKey, grantee: granteeKey))
        let holder = KeyStatement.Holder(
            userID: granteeUserID, wrapping: .ecdh,
            agreementKeyFingerprint: KeyStatement.fingerprint(ofAgreementKey: grantee.agreementPublicKey),
            wrappedFMKHash: KeyStatement.wrappedHash(wrapped))
        let statement = try nextStatement(
            after: verified.entry, kind: .grant,
            holders: verified.entry.head.statement.holders.filter { $0.userID != granteeUserID } + [holder])
        _ = try await client.grant(
            familyMemberID,
            GrantRequest(
                granteeUserID: granteeUserID, fmkVersion: version, wrappedFMK: wrapped,
                granteeAgreementPublicKey: grantee.agreementPublicKey, statement: statement))
        return try keys.agreementKey.verificationCode(with: granteeKey)
    }

    /// Hands ownership to a user who holds an active grant, with my signed `transfer` statement
    /// naming them and their identity key: a key this client pinned (`verifiedRecipient`), never
    /// one seen first here. The statement names its own security delay (`not_before`, the
    /// shortest every verifier accepts): before then only my recovery key's signature, added by
    /// its approval (`RecoveryKey.order(.approve, …, transfer:)`), puts it in effect.
    public func transferOwnership(_ familyMemberID: UUID, to newOwnerUserID: UUID) async throws -> GovernedOperation {
        let verified = try await verifiedKey(familyMemberID)
        // The service's own rules, read from the verified history: refused before anything is signed.
        guard verified.entry.ownerUserID == keys.userID else {
            throw GrantServiceError(status: 403, code: "forbidden", message: "only the family member's owner can transfer it")
        }
        guard newOwnerUserID != keys.userID else {
            throw GrantServiceError(status: 422, code: "already_owner", message: "you already own this family member")
        }
        guard verified.entry.head.statement.holder(newOwnerUserID) != nil else {
            throw GrantServiceError(status: 422, code: "not_a_grantee", message: "ownership can only pass to someone with active access")
        }
        let newOwner = try await verifiedRecipient(newOwnerUserID, in: verified.entry, for: .ownership)
        let statement = try nextStatement(
            after: verified.entry, kind: .transfer, holders: verified.entry.head.statement.holders,
            newOwner: KeyStatement.NewOwner(userID: newOwnerUserID, identityPublicKey: newOwner.identityPublicKey),
            delay: KeyStatement.minimumDelay)
        var signed = statement
        // This device's certified approval, if it has a certificate: a second certified device's then
        // makes the transfer immediate.
        signed.deviceApprovals = try await deviceApproval(of: try statement.statement.signingInput()).map { [$0] }
        let operation = try await client.transferOwnership(familyMemberID, to: newOwnerUserID, statement: signed)
        // What a recovery key may be asked to sign next: only the statement made here.
        guard operation.transfer?.statement == signed else {
            throw GrantServiceError(
                status: 502, code: "unexpected_answer", message: "the grant service answered with another transfer than the one signed here")
        }
        return operation
    }

    /// After an ownership transfer: re-wrap my copy under my own master key (an `adopt` statement,
    /// naming my recovery public key if I registered one).
    public func adoptOwnership(_ familyMemberID: UUID) async throws {
        let verified = try await verifiedKey(familyMemberID)
        let version = verified.wrapped.fmkVersion
        let wrapped = Data(try FMKWrapping.wrapForOwner(
            verified.fmk, familyMemberID: familyMemberID, version: UInt32(version), masterKey: keys.masterKey))
        let statement = try nextStatement(
            after: verified.entry, kind: .adopt,
            holders: verified.entry.head.statement.holders.filter { $0.userID != keys.userID } + [ownHolder(wrapped)],
            recoveryPublicKey: try await verifiedRecoveryPublicKey())
        _ = try await client.replaceKey(
            familyMemberID,
            ReplaceKeyRequest(fmkVersion: version, wrapping: .self, wrappedFMK: wrapped, granterAgreementPublicKey: nil, statement: statement))
    }

    // MARK: Records

    public func putRecord(_ familyMemberID: UUID, recordID: UUID = UUID(), plaintext: [UInt8], fmk: SecretKey, version: Int) async throws -> UUID {
        _ = try await client.putRecord(
            familyMemberID, recordID, try RecordCipher.seal(plaintext, recordID: recordID, version: version, fmk: fmk))
        return recordID
    }

    /// Every current record of a family member (following the change feed to its end).
    public func allRecords(_ familyMemberID: UUID, pageSize: Int = 1000) async throws -> [RecordResponse] {
        try await allRecords(familyMemberID, pageSize: pageSize, checking: { _ in })
    }

    /// As `allRecords`, showing each page to `check` before it is applied, so that a caller can
    /// stop at the first sign of a change it cannot work with (e.g. a newer FMK version).
    func allRecords(
        _ familyMemberID: UUID, pageSize: Int, checking check: (RecordPage) throws -> Void
    ) async throws -> [RecordResponse] {
        try await changes(familyMemberID, since: 0, pageSize: pageSize, checking: check).records
    }

    /// The records changed after `cursor` as they are now (deleted ones left out), oldest
    /// change first, and the cursor after the last change read.
    func changes(
        _ familyMemberID: UUID, since cursor: Int64, pageSize: Int, checking check: (RecordPage) throws -> Void
    ) async throws -> (records: [RecordResponse], cursor: Int64) {
        var records: [UUID: RecordResponse] = [:]
        var cursor = cursor
        while true {
            let page = try await client.changes(familyMemberID, since: cursor, limit: pageSize)
            try check(page)
            for record in page.records { records[record.recordID] = record }
            for deleted in page.deletedRecordIDs { records[deleted] = nil }
            cursor = page.nextCursor
            if !page.hasMore { break }
        }
        return (records.values.sorted { $0.changeSeq < $1.changeSeq }, cursor)
    }

    /// Decrypts every current record.
    public func readRecords(_ familyMemberID: UUID) async throws -> [UUID: [UInt8]] {
        let (fmk, _) = try await currentFMK(familyMemberID)
        var plaintexts: [UUID: [UInt8]] = [:]
        for record in try await allRecords(familyMemberID) {
            plaintexts[record.recordID] = try RecordCipher.open(record, fmk: fmk)
        }
        return plaintexts
    }
}

extension RegisterUserRequest {
    /// The registration of `keys`' user with one device, signed by the identity key, and by
    /// `recoveryKey` as well when it registers one (proof of possession): as `UserSession.register`
    /// sends it.
    public static func signed(
        keys: UserKeys, displayName: String, device: RegisterDeviceRequest, recoveryKey: RecoveryKey? = nil
    ) throws -> RegisterUserRequest {
        var request = RegisterUserRequest(
            userID: keys.userID, displayName: displayName,
            agreementPublicKey: Data(keys.agreementKey.publicKey.rawRepresentation),
            identityPublicKey: Data(keys.identityKey.publicKey.rawRepresentation), device: device,
            recoveryPublicKey: recoveryKey?.publicKey, signature: Data(),
            recoveryBinding: try recoveryKey.map {
                try RecoveryKeyBinding.sign(userID: keys.userID, identityKey: keys.identityKey, recoveryPublicKey: $0.publicKey)
            })
        let input = try request.signingInput()
        request.signature = Data(keys.identityKey.signature(for: input))
        request.recoverySignature = recoveryKey.map { Data($0.signingKey.signature(for: input)) }
        return request
    }
}
