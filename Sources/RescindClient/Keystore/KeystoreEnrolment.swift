import Foundation
import RescindCrypto
import RescindProtocol

/// Puts a user's identity and a registered device into a data directory's keystore (0600, in
/// a 0700 directory), the device proven to the grant service by challenge–response before
/// the call returns. What the `rescind` CLI's profile needs; the agent's `AgentEnrolment`
/// adds its record cache on top.
public enum KeystoreEnrolment {
    /// Registers a new user whose first device is this one, writes the keystore, then escrows
    /// the keys to `recoveryKey` (`KeyBackup`) and certifies this device's key with it
    /// (`DeviceCertificate`).
    /// - Parameter recoveryKey: registered with the user (its public half); never stored here.
    /// - Returns: with `recoverySetupErrors` naming what was not done when the identity and keystore
    ///   were made but the backup or the certificate was not stored (the words still stand for the
    ///   user; `rescind identity backup` and `rescind identity certify` finish it).
    /// - Throws: `AgentError` `.alreadyEnrolled` when the directory holds a keystore or a cache.
    @discardableResult
    public static func registerNewUser(
        displayName: String, deviceName: String, deviceKind: DeviceKind? = nil, role: DeviceRole = .agent,
        recoveryKey: RecoveryKey? = nil, configuration: AgentConfiguration
    ) async throws -> (userID: UUID, deviceID: UUID, recoverySetupErrors: [String]) {
        try refuseIfEnrolled(configuration)
        let keys = UserKeys.generate()
        let deviceKey = Ed25519.PrivateKey()
        let session = try await GrantServiceCall.run {
            try await UserSession.register(
                keys: keys, displayName: displayName, deviceName: deviceName, deviceKind: deviceKind, deviceRole: role,
                deviceKey: deviceKey, recoveryKey: recoveryKey, keyBackup: false, baseURL: configuration.grantServiceURL,
                tls: configuration.tls)
        }
        try await install(userKeys: keys, deviceID: session.deviceID, deviceKey: deviceKey, configuration: configuration)
        var unfinished: [String] = []
        if let recoveryKey {
            do {
                try await GrantServiceCall.run { try await session.storeKeyBackup(with: recoveryKey) }
            } catch {
                unfinished.append("your keys were not escrowed to the recovery key (\(error)); run rescind identity backup --recovery")
            }
            do {
                _ = try await GrantServiceCall.run { try await session.certifyThisDevice(with: recoveryKey) }
            } catch {
                unfinished.append("this device was not certified by the recovery key (\(error)); run rescind identity certify --recovery")
            }
        }
        return (keys.userID, session.deviceID, unfinished)
    }

    /// Writes the keystore for keys the caller already holds, for a device already registered
    /// with the grant service.
    /// - Throws: `AgentError.serviceRefused` when the grant service does not know the device
    ///   or it belongs to another user; nothing is written then.
    public static func install(
        userKeys: UserKeys, deviceID: UUID, deviceKey: Ed25519.PrivateKey, configuration: AgentConfiguration
    ) async throws {
        try refuseIfEnrolled(configuration)
        let client = GrantServiceClient(
            baseURL: configuration.grantServiceURL, credentials: .init(deviceID: deviceID, signingKey: deviceKey),
            tls: configuration.tls)
        let me = try await GrantServiceCall.run { try await client.me() }
        guard me.user.userID == userKeys.userID,
            me.user.agreementPublicKey == Data(userKeys.agreementKey.publicKey.rawRepresentation)
        else {
            throw AgentError(.serviceRefused, "device \(deviceID.uuidString.lowercased()) is registered to another user or other keys")
        }
        try SecureFiles.prepareDirectory(configuration.dataDirectory)
        let keystore = Keystore(userKeys: userKeys, deviceID: deviceID, deviceKey: deviceKey, storageKey: SecretKey())
        try await keystore.write(to: configuration.keystorePath, unlock: configuration.unlock, cost: configuration.keyDerivation)
    }

    /// - Throws: `AgentError.alreadyEnrolled` when the data directory holds a keystore or a cache.
    package static func refuseIfEnrolled(_ configuration: AgentConfiguration) throws {
        for path in [configuration.keystorePath, configuration.databasePath] where FileManager.default.fileExists(atPath: path) {
            throw AgentError(.alreadyEnrolled, "\(path) exists: this data directory is already enrolled")
        }
    }
}
