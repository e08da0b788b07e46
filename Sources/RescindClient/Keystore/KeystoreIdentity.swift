import Foundation
import RescindCrypto
import RescindMacros

/// What a keystore says in the clear: whose device it is and the inbox public key that
/// commands are sealed to while the agent is locked. Read without the passphrase.
@MemberwiseInit
package struct KeystoreIdentity: Sendable {
    package let deviceID: UUID
    package let userID: UUID
    package let inboxPublicKey: X25519.PublicKey

    package init(_ keystore: Keystore) {
        self.init(deviceID: keystore.deviceID, userID: keystore.userKeys.userID, inboxPublicKey: keystore.inboxKey.publicKey)
    }

    /// Reads the public part of the keystore at `path` (permissions are checked as for an unlock).
    /// - Throws: `.notEnrolled`, `.insecurePermissions`, `.invalidKeystore`; `.configuration`
    ///   for a keystore made before locked mode (it gains an inbox key at its next unlock).
    package static func read(path: String) throws -> KeystoreIdentity {
        guard FileManager.default.fileExists(atPath: path) else {
            throw AgentError(.notEnrolled, "no keystore at \(path): enrol this device first (rescind-agent enrol)")
        }
        let bytes = try SecureFiles.readOwnerOnly(path, kind: "keystore")
        let file = try KeystoreFile.decode(Data(bytes), expecting: KeystoreFile.keystoreFormat, path: path)
        guard let raw = file.inboxPublicKey else {
            throw AgentError(.configuration, "\(path) has no inbox key yet: start the agent unlocked once before running it locked")
        }
        guard let key = try? X25519.PublicKey(rawRepresentation: [UInt8](raw)) else {
            throw AgentError(.invalidKeystore, "\(path) has an invalid inbox public key")
        }
        return KeystoreIdentity(deviceID: file.deviceID, userID: file.userID, inboxPublicKey: key)
    }
}
