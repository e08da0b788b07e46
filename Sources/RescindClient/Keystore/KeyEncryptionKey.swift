import Foundation
import RescindCrypto

/// The key that wraps everything in a keystore: Argon2id over a passphrase, or the 32 bytes
/// of a key file. It exists only in guarded memory and only while a keystore is opened or
/// written.
package enum KeyEncryptionKey {
    /// The derivation to record in a new keystore for `unlock`.
    package static func newDerivation(for unlock: AgentConfiguration.Unlock, cost: AgentConfiguration.KeyDerivationCost) -> KeystoreFile.Derivation {
        switch unlock {
        case .keyFile:
            return .init(method: KeystoreFile.Derivation.keyFile, parameters: nil)
        case .passphrase, .passphraseFile:
            let fresh = Argon2id.Parameters.generate()
            return .init(
                method: KeystoreFile.Derivation.argon2id,
                parameters: .init(algorithm: fresh.algorithm, opsLimit: cost.opsLimit, memLimit: cost.memLimit, salt: fresh.salt))
        }
    }

    /// Derives the key for a stored derivation (Argon2id runs off the cooperative pool).
    /// - Throws: `AgentError` when the unlock source does not match how the keystore was made,
    ///   a secret file breaks `SecretFile`'s rule (open to others, another user's, unreadable), or a
    ///   key file is not 32 bytes.
    package static func derive(_ unlock: AgentConfiguration.Unlock, _ derivation: KeystoreFile.Derivation, path: String) async throws -> SecretKey {
        switch (unlock, derivation.method) {
        case (.keyFile(let file), KeystoreFile.Derivation.keyFile):
            var bytes = try SecureFiles.readMountedSecret(file, kind: "key file", byteCount: SecretKey.byteCount)
            return try SecretKey(bytes: &bytes)
        case (.passphrase(let text), KeystoreFile.Derivation.argon2id):
            return try await argon2(Array(text.utf8), derivation, path: path)
        case (.passphraseFile(let file), KeystoreFile.Derivation.argon2id):
            var bytes = try SecureFiles.readMountedSecret(file, kind: "passphrase file")
            while let last = bytes.last, last == 0x0A || last == 0x0D { bytes.removeLast() }
            return try await argon2(bytes, derivation, path: path)
        case (_, KeystoreFile.Derivation.keyFile):
            throw AgentError(.configuration, "\(path) is protected by a key file: set RESCIND_AGENT_KEY_FILE")
        case (_, KeystoreFile.Derivation.argon2id):
            throw AgentError(
                .configuration, "\(path) is protected by a passphrase: set RESCIND_AGENT_PASSPHRASE or RESCIND_AGENT_PASSPHRASE_FILE")
        default:
            throw AgentError(.invalidKeystore, "\(path) uses an unknown key derivation")
        }
    }

    private static func argon2(_ passphrase: [UInt8], _ derivation: KeystoreFile.Derivation, path: String) async throws -> SecretKey {
        var passphrase = passphrase
        defer { passphrase.wipe() }
        guard !passphrase.isEmpty else { throw AgentError(.configuration, "the passphrase is empty") }
        guard let parameters = derivation.parameters else {
            throw AgentError(.invalidKeystore, "\(path) lacks its Argon2id parameters")
        }
        do {
            return try await Argon2id.deriveKey(passphrase: passphrase, parameters: parameters)
        } catch let error as CryptoError {
            throw AgentError(.invalidKeystore, "\(path): Argon2id refused its parameters (\(error.code))")
        }
    }
}
