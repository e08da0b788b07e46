import Foundation
import RescindCrypto

extension Keystore {
    /// An identity bundle: the user's keys and one provisioned device's key, wrapped under
    /// Argon2id of a one-time bundle passphrase. It moves a user's identity to a new device
    /// (the device was registered by an existing device of the user); this device's storage
    /// key is never in it.
    package static func bundle(
        userKeys: UserKeys, deviceID: UUID, deviceKey: Ed25519.PrivateKey, passphrase: String,
        cost: AgentConfiguration.KeyDerivationCost
    ) async throws -> Data {
        let unlock = AgentConfiguration.Unlock.passphrase(passphrase)
        let derivation = KeyEncryptionKey.newDerivation(for: unlock, cost: cost)
        let kek = try await KeyEncryptionKey.derive(unlock, derivation, path: "identity bundle")
        let keys = Keystore(userKeys: userKeys, deviceID: deviceID, deviceKey: deviceKey, storageKey: SecretKey())
        return try keys.wrapped(under: kek, format: KeystoreFile.bundleFormat, derivation: derivation).encoded()
    }

    /// Reads an identity bundle and gives a keystore with a fresh storage key.
    /// - Throws: `.wrongPassphrase` for the wrong bundle passphrase, `.invalidKeystore` for a
    ///   file that is not a bundle.
    package static func importBundle(_ data: Data, passphrase: String, path: String) async throws -> Keystore {
        let file = try KeystoreFile.decode(data, expecting: KeystoreFile.bundleFormat, path: path)
        let kek = try await KeyEncryptionKey.derive(.passphrase(passphrase), file.derivation, path: path)
        let parts = try unwrap(file, kek: kek, path: path)
        return Keystore(userKeys: parts.userKeys, deviceID: parts.deviceID, deviceKey: parts.deviceKey, storageKey: SecretKey())
    }
}
