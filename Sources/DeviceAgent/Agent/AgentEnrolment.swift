import Foundation
import Logging
import RescindClient
import RescindCrypto
import RescindProtocol

/// Puts a user's identity and a registered device on this machine: the keystore is
/// written (0600, in a 0700 data directory) and the device proven to the grant service by
/// challenge–response before the call returns. The first `run` or `selfHeal` then
/// downloads the wrapped FMKs and records.
///
/// A device of an existing user is provisioned by one of the user's enrolled devices
/// (`provisionDevice`), which registers the new device's key with the grant service and
/// writes an identity bundle under a one-time passphrase; the new machine imports it
/// (`importBundle`). The private keys travel only inside that bundle, wrapped under
/// Argon2id of the bundle passphrase.
public enum AgentEnrolment {
    /// Registers a new user whose first device is this one (the keystore, then the cache).
    @discardableResult
    public static func registerNewUser(
        displayName: String, deviceName: String, deviceKind: DeviceKind? = nil, role: DeviceRole = .agent,
        configuration: AgentConfiguration
    ) async throws -> (userID: UUID, deviceID: UUID) {
        let enrolled = try await KeystoreEnrolment.registerNewUser(
            displayName: displayName, deviceName: deviceName, deviceKind: deviceKind, role: role, configuration: configuration)
        _ = try AgentStore(path: configuration.databasePath)
        return (enrolled.userID, enrolled.deviceID)
    }

    /// Installs keys the caller already holds for a device already registered with the
    /// grant service (tests, demos, and the end of `importBundle`), then creates the cache.
    /// - Throws: `AgentError.serviceRefused` when the grant service does not know the device
    ///   or it belongs to another user; nothing is written then.
    public static func install(
        userKeys: UserKeys, deviceID: UUID, deviceKey: Ed25519.PrivateKey, configuration: AgentConfiguration
    ) async throws {
        try await KeystoreEnrolment.install(userKeys: userKeys, deviceID: deviceID, deviceKey: deviceKey, configuration: configuration)
        _ = try AgentStore(path: configuration.databasePath)
    }

    /// Imports an identity bundle written by `provisionDevice` on another device of the user.
    @discardableResult
    public static func importBundle(
        at path: String, passphrase: String, configuration: AgentConfiguration
    ) async throws -> (userID: UUID, deviceID: UUID) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw AgentError(.configuration, "identity bundle \(path) cannot be read")
        }
        let keystore = try await Keystore.importBundle(data, passphrase: passphrase, path: path)
        try await install(
            userKeys: keystore.userKeys, deviceID: keystore.deviceID, deviceKey: keystore.deviceKey, configuration: configuration)
        return (keystore.userKeys.userID, keystore.deviceID)
    }

    /// From this enrolled device: registers a new device of the same user (signed with the
    /// identity key in this keystore) and writes its identity bundle (0600) to `bundlePath`.
    @discardableResult
    public static func provisionDevice(
        name: String, kind: DeviceKind? = nil, bundlePath: String, passphrase: String, configuration: AgentConfiguration
    ) async throws -> UUID {
        let keystore = try await Keystore.open(path: configuration.keystorePath, unlock: configuration.unlock)
        let session = UserSession(
            keys: keystore.userKeys, deviceID: keystore.deviceID, deviceKey: keystore.deviceKey,
            baseURL: configuration.grantServiceURL, tls: configuration.tls)
        let deviceKey = Ed25519.PrivateKey()
        let added = try await GrantServiceCall.run { try await session.addDevice(name: name, kind: kind, deviceKey: deviceKey) }
        let bundle = try await Keystore.bundle(
            userKeys: keystore.userKeys, deviceID: added.deviceID, deviceKey: deviceKey, passphrase: passphrase,
            cost: configuration.keyDerivation)
        try SecureFiles.writeOwnerOnly(bundle, to: bundlePath)
        return added.deviceID
    }

    /// A device kind named on a command line (nil for none).
    /// - Throws: `AgentError.configuration` naming the kinds there are.
    public static func deviceKind(_ text: String?) throws -> DeviceKind? {
        guard let text else { return nil }
        guard let kind = DeviceKind(rawValue: text) else {
            throw AgentError(
                .configuration, "unknown device kind \(text): one of \(DeviceKind.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return kind
    }
}
