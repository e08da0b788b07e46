import Foundation
import RescindCrypto
import RescindProtocol
import RescindTLS

extension RecoveryKey {
    /// `keys` escrowed to this recovery key (`KeyEscrow`) and signed by it, for `PUT /v1/key-backup`.
    public func backup(of keys: UserKeys) throws -> KeyBackup {
        let ephemeral = X25519.PrivateKey()
        let kek = try KeyEscrow.kek(own: ephemeral, peer: escrowKey.publicKey, userID: keys.userID)
        var backup = KeyBackup(
            userID: keys.userID, identityPublicKey: Data(keys.identityKey.publicKey.rawRepresentation),
            agreementPublicKey: Data(keys.agreementKey.publicKey.rawRepresentation), recoveryPublicKey: publicKey,
            ephemeralPublicKey: Data(ephemeral.publicKey.rawRepresentation),
            agreementKey: Data(try keys.agreementKey.wrapped(using: kek)), identityKey: Data(try keys.identityKey.wrapped(using: kek)),
            masterKey: Data(try AESKeyWrap.wrap(keys.masterKey, using: kek)))
        backup.signature = Data(signingKey.signature(for: try backup.signingInput()))
        return backup
    }

    /// The keys `backup` holds for `userID`, trusting nothing the service says about it: it must
    /// be signed by this recovery key, for this user, and each key must be the one it names.
    /// - Throws: `RecoveryKeyError` for a backup of another recovery key or user, one this key did
    ///   not sign (planted, or changed by a byte), or one whose keys do not open or do not match.
    public func open(_ backup: KeyBackup, userID: UUID) throws -> UserKeys {
        guard backup.recoveryPublicKey == publicKey else {
            throw RecoveryKeyError("the key backup is for another recovery key")
        }
        guard backup.userID == userID else { throw RecoveryKeyError("the key backup is another user's") }
        guard signingKey.publicKey.isValidSignature([UInt8](backup.signature), for: try backup.signingInput()) else {
            throw RecoveryKeyError("the key backup is not signed by this recovery key: it was not made with your recovery words")
        }
        do {
            let ephemeral = try X25519.PublicKey(rawRepresentation: [UInt8](backup.ephemeralPublicKey))
            let kek = try KeyEscrow.kek(own: escrowKey, peer: ephemeral, userID: userID)
            let keys = UserKeys(
                userID: userID, agreementKey: try X25519.PrivateKey(unwrapping: [UInt8](backup.agreementKey), using: kek),
                identityKey: try Ed25519.PrivateKey(unwrapping: [UInt8](backup.identityKey), using: kek),
                masterKey: try AESKeyWrap.unwrap([UInt8](backup.masterKey), using: kek))
            guard Data(keys.identityKey.publicKey.rawRepresentation) == backup.identityPublicKey,
                Data(keys.agreementKey.publicKey.rawRepresentation) == backup.agreementPublicKey
            else { throw RecoveryKeyError("the key backup's keys are not the ones it names") }
            return keys
        } catch let error as RecoveryKeyError {
            throw error
        } catch {
            throw RecoveryKeyError("the key backup does not open with this recovery key")
        }
    }
}

extension GrantServiceClient {
    /// Stores my user's key backup in place of the previous one.
    /// - Throws: 409 `stale_key_backup` or `recovery_key_not_registered`, 422 `bad_signature`.
    public func storeKeyBackup(_ backup: KeyBackup) async throws {
        try await sendExpectingNoContent(.put, "v1/key-backup", body: backup)
    }

    /// My user's key backup (404 when none was stored).
    public func keyBackup() async throws -> KeyBackup {
        try await send(.get, "v1/key-backup")
    }
}

extension UserSession {
    /// Escrows this session's keys to `recoveryKey` (the user's registered one), replacing the
    /// stored backup: after the identity is created, rotated or given a new recovery key.
    public func storeKeyBackup(with recoveryKey: RecoveryKey) async throws {
        try await client.storeKeyBackup(try recoveryKey.backup(of: keys))
    }

    /// A session on a device the recovery key enrolled (`RecoveryKey.order(.enrol, …)`), with
    /// the user's keys from their key backup: how a user with no device left — lost, or retired
    /// by a thief — and only the recovery words gets back the keys that sign and open what they
    /// own. The backup must pass `RecoveryKey.open` and hold the keys registered for the user now
    /// (one of keys since rotated away is refused).
    public static func recovering(
        userID: UUID, deviceID: UUID, deviceKey: Ed25519.PrivateKey, recoveryKey: RecoveryKey, baseURL: URL, tls: ClientTLS = .strict
    ) async throws -> UserSession {
        let client = GrantServiceClient(baseURL: baseURL, credentials: .init(deviceID: deviceID, signingKey: deviceKey), tls: tls)
        let backup = try await client.keyBackup()
        let keys = try recoveryKey.open(backup, userID: userID)
        let user = try await client.me().user
        guard user.identityPublicKey == backup.identityPublicKey, user.agreementPublicKey == backup.agreementPublicKey else {
            throw RecoveryKeyError("the key backup holds keys that are no longer your identity's (rotated since it was made)")
        }
        return UserSession(keys: keys, deviceID: deviceID, deviceKey: deviceKey, baseURL: baseURL, tls: tls)
    }
}
