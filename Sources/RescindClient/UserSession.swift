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

    /// - Parameter tls: how the grant service is reached (default: HTTPS with the system's roots).
    public init(keys: UserKeys, deviceID: UUID, deviceKey: Ed25519.PrivateKey, baseURL: URL, tls: ClientTLS = .strict) {
        self.keys = keys
        self.deviceID = deviceID
        self.client = GrantServiceClient(
            baseURL: baseURL, credentials: .init(deviceID: deviceID, signingKey: deviceKey), tls: tls)
    }

    /// Registers the user with their public keys and this device.
    public static func register(
        keys: UserKeys, displayName: String, deviceID: UUID = UUID(), deviceName: String, deviceKind: DeviceKind? = nil,
        deviceRole: DeviceRole? = nil, deviceKey: Ed25519.PrivateKey = Ed25519.PrivateKey(), baseURL: URL,
        tls: ClientTLS = .strict
    ) async throws -> UserSession {
        var request = RegisterUserRequest(
            userID: keys.userID, displayName: displayName,
            agreementPublicKey: Data(keys.agreementKey.publicKey.rawRepresentation),
            identityPublicKey: Data(keys.identityKey.publicKey.rawRepresentation),
            device: RegisterDeviceRequest(
                deviceID: deviceID, name: deviceName, kind: deviceKind, role: deviceRole,
                signingPublicKey: Data(deviceKey.publicKey.rawRepresentation)),
            signature: Data())
        request.signature = Data(keys.identityKey.signature(for: try request.signingInput()))
        _ = try await GrantServiceClient(baseURL: baseURL, tls: tls).registerUser(request)
        return UserSession(keys: keys, deviceID: deviceID, deviceKey: deviceKey, baseURL: baseURL, tls: tls)
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
    public func createFamilyMember(id: UUID = UUID()) async throws -> (familyMemberID: UUID, fmk: SecretKey) {
        let fmk = SecretKey()
        let wrapped = try FMKWrapping.wrapForOwner(fmk, familyMemberID: id, version: 1, masterKey: keys.masterKey)
        _ = try await client.createFamilyMember(CreateFamilyMemberRequest(familyMemberID: id, wrappedFMK: Data(wrapped)))
        return (id, fmk)
    }

    /// Fetches and unwraps my copy of the current FMK. A revoked user gets the service's 403.
    public func currentFMK(_ familyMemberID: UUID) async throws -> (fmk: SecretKey, version: Int) {
        let wrapped = try await client.wrappedKey(familyMemberID)
        return (try unwrap(wrapped), wrapped.fmkVersion)
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

    /// Shares a family member: wraps the current FMK from my key to the grantee's.
    /// - Returns: the TOFU verification code both sides can compare (`A3-5F-2B`).
    @discardableResult
    public func grant(_ familyMemberID: UUID, to granteeUserID: UUID) async throws -> String {
        let (fmk, version) = try await currentFMK(familyMemberID)
        let grantee = try await client.user(granteeUserID)
        let granteeKey = try X25519.PublicKey(rawRepresentation: [UInt8](grantee.agreementPublicKey))
        let wrapped = try FMKWrapping.wrap(
            fmk, familyMemberID: familyMemberID, version: UInt32(version), granter: keys.agreementKey, grantee: granteeKey)
        _ = try await client.grant(
            familyMemberID,
            GrantRequest(
                granteeUserID: granteeUserID, fmkVersion: version, wrappedFMK: Data(wrapped),
                granteeAgreementPublicKey: grantee.agreementPublicKey))
        return try keys.agreementKey.verificationCode(with: granteeKey)
    }

    /// After an ownership transfer: re-wrap my copy under my own master key.
    public func adoptOwnership(_ familyMemberID: UUID) async throws {
        let (fmk, version) = try await currentFMK(familyMemberID)
        let wrapped = try FMKWrapping.wrapForOwner(
            fmk, familyMemberID: familyMemberID, version: UInt32(version), masterKey: keys.masterKey)
        _ = try await client.replaceKey(
            familyMemberID,
            ReplaceKeyRequest(fmkVersion: version, wrapping: .self, wrappedFMK: Data(wrapped), granterAgreementPublicKey: nil))
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
