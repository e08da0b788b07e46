import Foundation
import RescindCrypto

/// The agent's keys, unlocked: the user's keys (agreement, identity, master), this device's
/// signing key, the storage key that wraps the FMKs cached in the local database, the
/// inbox key that opens commands a locked agent sealed to its public half, and the
/// database key of at-rest encryption of cached records (`AtRestLayer`).
///
/// Every secret is a guarded-memory type (`SecretKey`, `X25519.PrivateKey`,
/// `Ed25519.PrivateKey`); on disk they exist only AES-key-wrapped under the key-encryption
/// key (`KeyEncryptionKey`).
package struct Keystore: Sendable {
    package let userKeys: UserKeys
    package let deviceID: UUID
    package let deviceKey: Ed25519.PrivateKey
    package let storageKey: SecretKey
    package let inboxKey: X25519.PrivateKey
    package let atRestKey: SecretKey

    package init(
        userKeys: UserKeys, deviceID: UUID, deviceKey: Ed25519.PrivateKey, storageKey: SecretKey,
        inboxKey: X25519.PrivateKey = X25519.PrivateKey(), atRestKey: SecretKey = SecretKey()
    ) {
        self.userKeys = userKeys
        self.deviceID = deviceID
        self.deviceKey = deviceKey
        self.storageKey = storageKey
        self.inboxKey = inboxKey
        self.atRestKey = atRestKey
    }

    package var signer: String { "device:\(deviceID.uuidString.lowercased())" }

    /// Writes a new keystore at `path` (0600, atomically).
    package func write(to path: String, unlock: AgentConfiguration.Unlock, cost: AgentConfiguration.KeyDerivationCost) async throws {
        let derivation = KeyEncryptionKey.newDerivation(for: unlock, cost: cost)
        let kek = try await KeyEncryptionKey.derive(unlock, derivation, path: path)
        try write(to: path, kek: kek, derivation: derivation)
    }

    private func write(to path: String, kek: SecretKey, derivation: KeystoreFile.Derivation) throws {
        var file = try wrapped(under: kek, format: KeystoreFile.keystoreFormat, derivation: derivation)
        file.storageKey = Data(try AESKeyWrap.wrap(storageKey, using: kek))
        file.inboxPublicKey = Data(inboxKey.publicKey.rawRepresentation)
        file.inboxKey = Data(try inboxKey.wrapped(using: kek))
        file.atRestKey = Data(try AESKeyWrap.wrap(atRestKey, using: kek))
        try SecureFiles.writeOwnerOnly(try file.encoded(), to: path)
    }

    /// Opens the keystore at `path`.
    /// - Throws: `AgentError` `.notEnrolled` when there is none, `.insecurePermissions` when
    ///   others can read it, `.wrongPassphrase` when the unlock source does not open it.
    package static func open(path: String, unlock: AgentConfiguration.Unlock) async throws -> Keystore {
        guard FileManager.default.fileExists(atPath: path) else {
            throw AgentError(.notEnrolled, "no keystore at \(path): enrol this device first (rescind-agent enrol)")
        }
        let bytes = try SecureFiles.readOwnerOnly(path, kind: "keystore")
        let file = try KeystoreFile.decode(Data(bytes), expecting: KeystoreFile.keystoreFormat, path: path)
        let kek = try await KeyEncryptionKey.derive(unlock, file.derivation, path: path)
        let parts = try unwrap(file, kek: kek, path: path)
        guard let wrappedStorage = file.storageKey,
            let storageKey = try? AESKeyWrap.unwrap([UInt8](wrappedStorage), using: kek)
        else {
            throw AgentError(.invalidKeystore, "\(path) has no usable storage key")
        }
        guard let wrappedInbox = file.inboxKey, let wrappedAtRest = file.atRestKey else {
            // A keystore from before locked mode or at-rest encryption: add the missing keys
            // now, while the KEK is at hand.
            let keystore = Keystore(
                userKeys: parts.userKeys, deviceID: parts.deviceID, deviceKey: parts.deviceKey, storageKey: storageKey,
                inboxKey: file.inboxKey.flatMap { try? X25519.PrivateKey(unwrapping: [UInt8]($0), using: kek) } ?? X25519.PrivateKey())
            try keystore.write(to: path, kek: kek, derivation: file.derivation)
            return keystore
        }
        guard let inboxKey = try? X25519.PrivateKey(unwrapping: [UInt8](wrappedInbox), using: kek),
            file.inboxPublicKey == Data(inboxKey.publicKey.rawRepresentation),
            let atRestKey = try? AESKeyWrap.unwrap([UInt8](wrappedAtRest), using: kek)
        else {
            throw AgentError(.invalidKeystore, "\(path) has no usable inbox or at-rest key")
        }
        return Keystore(
            userKeys: parts.userKeys, deviceID: parts.deviceID, deviceKey: parts.deviceKey, storageKey: storageKey, inboxKey: inboxKey,
            atRestKey: atRestKey)
    }

    package func wrapped(under kek: SecretKey, format: String, derivation: KeystoreFile.Derivation) throws -> KeystoreFile {
        KeystoreFile(
            format: format, derivation: derivation, userID: userKeys.userID, deviceID: deviceID,
            agreementKey: Data(try userKeys.agreementKey.wrapped(using: kek)),
            identityKey: Data(try userKeys.identityKey.wrapped(using: kek)),
            masterKey: Data(try AESKeyWrap.wrap(userKeys.masterKey, using: kek)),
            deviceKey: Data(try deviceKey.wrapped(using: kek)), storageKey: nil)
    }

    /// The user and device keys of a keystore or bundle file.
    /// - Throws: `.wrongPassphrase` when the first key does not unwrap (AES-KW's integrity check).
    package static func unwrap(_ file: KeystoreFile, kek: SecretKey, path: String) throws -> (userKeys: UserKeys, deviceID: UUID, deviceKey: Ed25519.PrivateKey) {
        let agreement: X25519.PrivateKey
        do {
            agreement = try X25519.PrivateKey(unwrapping: [UInt8](file.agreementKey), using: kek)
        } catch {
            throw AgentError(.wrongPassphrase, "wrong passphrase or key file for \(path)")
        }
        do {
            let identity = try Ed25519.PrivateKey(unwrapping: [UInt8](file.identityKey), using: kek)
            let master = try AESKeyWrap.unwrap([UInt8](file.masterKey), using: kek)
            let device = try Ed25519.PrivateKey(unwrapping: [UInt8](file.deviceKey), using: kek)
            return (
                UserKeys(userID: file.userID, agreementKey: agreement, identityKey: identity, masterKey: master),
                file.deviceID, device
            )
        } catch {
            throw AgentError(.invalidKeystore, "\(path) is damaged: a key does not unwrap")
        }
    }
}
