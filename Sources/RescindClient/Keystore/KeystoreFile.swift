import Foundation
import RescindCrypto

/// The on-disk form of a keystore, and of an identity bundle (the same shape without the
/// device's storage key): every private key AES-key-wrapped under one key-encryption key,
/// and how to get that key back (Argon2id parameters, or "the key file is the key").
///
/// Only wrapped bytes and public identifiers are written; a file is useless without the
/// passphrase or key file.
package struct KeystoreFile: Codable, Sendable {
    package static let keystoreFormat = "rescind-agent-keystore-v1"
    package static let bundleFormat = "rescind-identity-bundle-v1"
    /// A user's keys after a rotation, for the user's other devices (no device key of theirs in it).
    package static let identityUpdateFormat = "rescind-identity-update-v1"

    package struct Derivation: Codable, Sendable {
        package static let argon2id = "argon2id"
        package static let keyFile = "key-file"

        /// `argon2id` or `key-file`.
        package var method: String
        package var parameters: Argon2id.Parameters?
    }

    package var format: String
    package var derivation: Derivation
    package var userID: UUID
    package var deviceID: UUID
    /// User X25519 private key (ECDH unwrapping of granted FMKs).
    package var agreementKey: Data
    /// User Ed25519 identity key.
    package var identityKey: Data
    /// The user's master key (unwraps the user's own FMK copies).
    package var masterKey: Data
    /// This device's Ed25519 key (authentication, signed acks).
    package var deviceKey: Data
    /// Wraps this device's cached FMKs; never exported in a bundle.
    package var storageKey: Data?
    /// The device's inbox X25519 public key, in the clear: a locked agent seals the commands
    /// it receives to it (`SealedInbox`). Never in a bundle.
    package var inboxPublicKey: Data?
    /// The inbox private key, wrapped like the others; needed only to unseal at unlock.
    package var inboxKey: Data?
    /// The database key of at-rest encryption (`AtRestLayer`); never in a bundle.
    package var atRestKey: Data?

    enum CodingKeys: String, CodingKey {
        case format, derivation, userID = "user_id", deviceID = "device_id"
        case agreementKey = "agreement_key", identityKey = "identity_key", masterKey = "master_key"
        case deviceKey = "device_key", storageKey = "storage_key"
        case inboxPublicKey = "inbox_public_key", inboxKey = "inbox_key", atRestKey = "at_rest_key"
    }

    package func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return try encoder.encode(self)
    }

    package static func decode(_ data: Data, expecting format: String, path: String) throws -> KeystoreFile {
        guard let file = try? JSONDecoder().decode(KeystoreFile.self, from: data), file.format == format else {
            throw AgentError(.invalidKeystore, "\(path) is not a \(format) file")
        }
        return file
    }
}
