import Foundation
import RescindConfiguration
import RescindCrypto
import RescindProtocol

/// Changes to the keys an enrolled data directory holds: the user's identity keys
/// (rotation, after a device was stolen) and the passphrase that protects them.
///
/// A rotation survives a crash at any point. The new keys are written to a second keystore
/// (`keystore.json.rotating`) before the grant service hears of them, and replace the old
/// keystore only once every FMK copy was moved to them. Whoever opens the directory next
/// (`finishPendingRotation`) asks the grant service which keys are current and either
/// finishes the rotation or discards the unused new keys.
public enum KeystoreRotation {
    public struct Outcome: Sendable, Equatable {
        /// The identity generation now in force.
        public let generation: Int
        /// FMK copies moved to the new keys by this run, and copies that already were.
        public let rewrapped: Int
        public let alreadyCurrent: Int
        /// Set while the rotation waits (`GovernedOperation`): for the security delay to run out
        /// or for a second device's approval. Nothing moved yet; the new keys wait beside the old.
        public let pending: GovernedOperation?
        /// Whether the new keys were escrowed to the recovery key (`KeyBackup`): only when the
        /// recovery words approved the rotation. Otherwise the stored backup holds the old keys
        /// until `rescind identity backup` renews it.
        public var backedUp = false

        package init(generation: Int, rewrapped: Int, alreadyCurrent: Int, pending: GovernedOperation? = nil) {
            self.generation = generation
            self.rewrapped = rewrapped
            self.alreadyCurrent = alreadyCurrent
            self.pending = pending
        }
    }

    package static func pendingPath(_ configuration: AgentConfiguration) -> String { configuration.keystorePath + ".rotating" }

    /// Gives this device's user new X25519, Ed25519 identity and master keys, registered
    /// with a statement signed by the old and the new identity key, and moves every FMK copy
    /// the user holds to them. Finishes an interrupted rotation first.
    ///
    /// The rotation is a governed operation: begun from this device alone it waits for the
    /// security delay (or a second device's approval) and the outcome says so (`pending`); run
    /// again, or open the profile, after it took effect to finish it. With `recoveryKey` it is
    /// approved and finished at once.
    /// - Throws: `AgentError` (`.serviceRefused` when the service refused the statement —
    ///   nothing changed then; `.unavailable` when it could not be reached — run it again).
    public static func rotateIdentity(configuration: AgentConfiguration, recoveryKey: RecoveryKey? = nil) async throws -> Outcome {
        if let outcome = try await finishPendingRotation(configuration: configuration, recoveryKey: recoveryKey) {
            guard let pending = outcome.pending else { return outcome }
            guard let recoveryKey else { return outcome }
            return try await approve(pending, with: recoveryKey, configuration: configuration)
        }
        let keystore = try await Keystore.open(path: configuration.keystorePath, unlock: configuration.unlock)
        let session = try session(keystore, configuration)
        let me = try await GrantServiceCall.run { try await session.client.me() }
        let next = keystore.replacingUserKeys(UserKeys.generate(userID: keystore.userKeys.userID))
        try await next.write(to: pendingPath(configuration), unlock: configuration.unlock, cost: configuration.keyDerivation)
        let operation: GovernedOperation
        do {
            operation = try await session.registerRotation(to: next.userKeys, currentGeneration: me.user.identityGeneration)
        } catch let error as GrantServiceError where (400...499).contains(error.status) {
            try? FileManager.default.removeItem(atPath: pendingPath(configuration))
            throw AgentError(.serviceRefused, "the grant service refused the rotation: \(error)")
        } catch {
            throw AgentError(.unavailable, "the rotation may not have reached the grant service (\(error)); run it again to finish")
        }
        if let recoveryKey { return try await approve(operation, with: recoveryKey, configuration: configuration) }
        return Outcome(generation: me.user.identityGeneration, rewrapped: 0, alreadyCurrent: 0, pending: operation)
    }

    /// Approves a pending rotation with the recovery key and finishes it.
    private static func approve(_ operation: GovernedOperation, with recoveryKey: RecoveryKey, configuration: AgentConfiguration) async throws -> Outcome {
        // The words sign the rotation statement: only one whose two signatures verify (one from a
        // key this user never held moves no family member: verifiers pin the key it replaces).
        guard let rotation = operation.rotation, rotation.hasValidSignatures() else {
            throw AgentError(.serviceRefused, "the grant service listed a rotation this device did not sign; nothing was approved")
        }
        let anonymous = GrantServiceClient(baseURL: configuration.grantServiceURL, tls: configuration.tls)
        let result = try await GrantServiceCall.run {
            try await recoveryKey.approve(operation, through: anonymous)
        }
        guard result.operation?.state == .applied else {
            throw AgentError(.serviceRefused, "the rotation did not take effect (\(result.operation?.state.rawValue ?? "unknown")); run it again")
        }
        // What the service registered decides, not what it answered: a compromised service that
        // claims the approval took effect but keeps the old keys gets nothing re-wrapped.
        guard let outcome = try await finishPendingRotation(configuration: configuration, recoveryKey: recoveryKey) else {
            throw AgentError(.serviceRefused, "the approved rotation is not the one this device began")
        }
        guard outcome.pending == nil else {
            throw AgentError(
                .serviceRefused,
                "the grant service said the recovery key's approval took effect, but it still holds this device's old identity keys: "
                    + "nothing was re-wrapped (the service may be compromised)")
        }
        return outcome
    }

    /// Finishes or discards a rotation a crash interrupted, or reports the one still waiting
    /// (`Outcome.pending`); `nil` when none was pending or the service never took it, or it was
    /// vetoed, cancelled or withdrawn (the unused new keys are then deleted).
    @discardableResult
    /// - Parameter recoveryKey: the recovery words, when they approved it: the new keys are then
    ///   escrowed to them (`KeyBackup`) before the new keystore is swapped in.
    public static func finishPendingRotation(configuration: AgentConfiguration, recoveryKey: RecoveryKey? = nil) async throws -> Outcome? {
        let pending = pendingPath(configuration)
        guard FileManager.default.fileExists(atPath: pending) else { return nil }
        let current = try await Keystore.open(path: configuration.keystorePath, unlock: configuration.unlock)
        let next = try await Keystore.open(path: pending, unlock: configuration.unlock)
        let client = try session(current, configuration).client
        let me = try await GrantServiceCall.run { try await client.me() }
        switch me.user.identityPublicKey {
        case Data(next.userKeys.identityKey.publicKey.rawRepresentation):
            return try await complete(from: current, to: next, recoveryKey: recoveryKey, configuration: configuration)
        case Data(current.userKeys.identityKey.publicKey.rawRepresentation):
            let nextKey = Data(next.userKeys.identityKey.publicKey.rawRepresentation)
            let operations = try await GrantServiceCall.run { try await client.governedOperations() }
            if let waiting = operations.first(where: { $0.state == .pending && $0.rotation?.statement.identityPublicKey == nextKey }) {
                return Outcome(generation: me.user.identityGeneration, rewrapped: 0, alreadyCurrent: 0, pending: waiting)
            }
            try FileManager.default.removeItem(atPath: pending)
            return nil
        default:
            throw AgentError(
                .serviceRefused, "the grant service holds identity keys this device never had: rotate again from a device that has them")
        }
    }

    /// Re-wraps every copy for the new keys, then swaps the new keystore in (one rename).
    private static func complete(
        from old: Keystore, to next: Keystore, recoveryKey: RecoveryKey?, configuration: AgentConfiguration
    ) async throws -> Outcome {
        let session = try session(next, configuration)
        let moved = try await GrantServiceCall.run { try await session.rewrapHeldKeys(from: old.userKeys) }
        let generation = try await GrantServiceCall.run { try await session.client.me() }.user.identityGeneration
        guard rename(pendingPath(configuration), configuration.keystorePath) == 0 else {
            throw AgentError(.storage, "cannot replace \(configuration.keystorePath) (errno \(errno)); run it again to finish")
        }
        var outcome = Outcome(generation: generation, rewrapped: moved.rewrapped, alreadyCurrent: moved.current)
        // After the swap, so that a backup the service refuses (or a crash) never leaves the
        // rotation unfinished: the outcome says the backup still holds the previous keys.
        if let recoveryKey {
            outcome.backedUp = (try? await GrantServiceCall.run { try await session.storeKeyBackup(with: recoveryKey) }) != nil
        }
        return outcome
    }

    /// Re-protects the keystore under a new passphrase or key file (key-hierarchy ADR,
    /// scenario A: a password change re-wraps the keys, never the records). The keys and
    /// the cache are unchanged; the file is replaced atomically.
    /// - Throws: `.wrongPassphrase` when `configuration.unlock` does not open the keystore.
    public static func changeUnlock(configuration: AgentConfiguration, to newUnlock: AgentConfiguration.Unlock) async throws {
        let keystore = try await Keystore.open(path: configuration.keystorePath, unlock: configuration.unlock)
        try await keystore.write(to: configuration.keystorePath, unlock: newUnlock, cost: configuration.keyDerivation)
    }

    /// Writes the user's current keys (0600) for the user's other devices, wrapped under
    /// Argon2id of a one-time passphrase: after a rotation, each of them imports it with
    /// `importIdentityUpdate` (`rescind-agent update-identity --bundle F`). It carries no
    /// device key, so it enrols nothing by itself.
    public static func writeIdentityUpdate(to path: String, passphrase: String, configuration: AgentConfiguration) async throws {
        let keystore = try await Keystore.open(path: configuration.keystorePath, unlock: configuration.unlock)
        let unlock = AgentConfiguration.Unlock.passphrase(passphrase)
        let derivation = KeyEncryptionKey.newDerivation(for: unlock, cost: configuration.keyDerivation)
        let kek = try await KeyEncryptionKey.derive(unlock, derivation, path: "identity update")
        // The file format has a device key slot; it holds a throwaway key, never this device's.
        let carrier = Keystore(userKeys: keystore.userKeys, deviceID: keystore.deviceID, deviceKey: Ed25519.PrivateKey(), storageKey: SecretKey())
        let file = try carrier.wrapped(under: kek, format: KeystoreFile.identityUpdateFormat, derivation: derivation)
        try SecureFiles.writeOwnerOnly(try file.encoded(), to: path)
    }

    /// Takes the user's rotated keys from an identity update written on another device of the
    /// same user. They replace this device's user keys only if the grant service confirms they
    /// are the user's current ones (so an old or foreign update changes nothing); this device's
    /// own keys and cache stay as they are.
    /// - Returns: the identity generation now held.
    /// - Throws: `.wrongPassphrase`, `.invalidKeystore`, or `.serviceRefused` for keys that are
    ///   not this user's current ones.
    @discardableResult
    public static func importIdentityUpdate(at path: String, passphrase: String, configuration: AgentConfiguration) async throws -> Int {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw AgentError(.configuration, "identity update \(path) cannot be read")
        }
        let file = try KeystoreFile.decode(data, expecting: KeystoreFile.identityUpdateFormat, path: path)
        let kek = try await KeyEncryptionKey.derive(.passphrase(passphrase), file.derivation, path: path)
        let update = try Keystore.unwrap(file, kek: kek, path: path).userKeys
        let keystore = try await Keystore.open(path: configuration.keystorePath, unlock: configuration.unlock)
        guard update.userID == keystore.userKeys.userID else {
            throw AgentError(.serviceRefused, "\(path) holds another user's keys")
        }
        let me = try await GrantServiceCall.run { try await session(keystore, configuration).client.me() }
        guard me.user.identityPublicKey == Data(update.identityKey.publicKey.rawRepresentation),
            me.user.agreementPublicKey == Data(update.agreementKey.publicKey.rawRepresentation)
        else {
            throw AgentError(.serviceRefused, "\(path) does not hold the user's current keys (generation \(me.user.identityGeneration))")
        }
        try await keystore.replacingUserKeys(update)
            .write(to: configuration.keystorePath, unlock: configuration.unlock, cost: configuration.keyDerivation)
        return me.user.identityGeneration
    }

    private static func session(_ keystore: Keystore, _ configuration: AgentConfiguration) throws -> UserSession {
        UserSession(
            keys: keystore.userKeys, deviceID: keystore.deviceID, deviceKey: keystore.deviceKey,
            baseURL: configuration.grantServiceURL, tls: configuration.tls,
            keyHistory: try KeyHistoryStore(path: configuration.keyHistoryPath),
            pins: try IdentityPins(path: configuration.identityPinsPath))
    }
}

extension AgentConfiguration.Unlock {
    /// The one unlock source named by three variables (a passphrase, a passphrase file, a key
    /// file), e.g. the new one of a passphrase change; `nil` when none is set.
    /// - Throws: `ConfigurationError` when more than one is set.
    public static func named(
        passphrase: String, passphraseFile: String, keyFile: String, in environment: [String: String]
    ) throws -> Self? {
        let value = { (name: String) in EnvironmentReader.secret(name, in: environment) }
        let sources: [Self] = [
            value(passphrase).map(Self.passphrase), value(passphraseFile).map(Self.passphraseFile), value(keyFile).map(Self.keyFile),
        ].compactMap { $0 }
        guard sources.count <= 1 else {
            throw ConfigurationError(variable: passphrase, problem: "set only one of \(passphrase), \(passphraseFile), \(keyFile)")
        }
        return sources.first
    }
}

extension Keystore {
    /// The same device with other user keys (its device, storage, inbox and at-rest keys kept,
    /// so its cache stays readable).
    package func replacingUserKeys(_ userKeys: UserKeys) -> Keystore {
        Keystore(
            userKeys: userKeys, deviceID: deviceID, deviceKey: deviceKey, storageKey: storageKey, inboxKey: inboxKey,
            atRestKey: atRestKey)
    }
}
