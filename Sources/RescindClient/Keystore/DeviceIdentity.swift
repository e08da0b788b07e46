import Foundation

/// The user identity an enrolled data directory holds, for user-facing clients that act
/// as that device (the `rescind` CLI). One keystore format for agents and the CLI.
public enum DeviceIdentity {
    /// Unlocks the keystore (one Argon2id derivation, or a key-file read) and returns a
    /// session acting as the enrolled device.
    /// - Throws: `AgentError` `.notEnrolled`, `.insecurePermissions` or `.wrongPassphrase`;
    ///   `.unavailable` when an interrupted rotation needs the grant service to be finished.
    public static func session(configuration: AgentConfiguration) async throws -> UserSession {
        // An identity rotation a crash interrupted is finished (or discarded) before the keys are used.
        // One whose family members follow the new keys only later waits: the old keys still open
        // every copy meanwhile (nothing was moved), and `rescind identity rotate` finishes it then.
        do {
            try await KeystoreRotation.finishPendingRotation(configuration: configuration)
        } catch let error as AgentError where error.code == .rotationNotDue {}
        let keystore = try await Keystore.open(path: configuration.keystorePath, unlock: configuration.unlock)
        return UserSession(
            keys: keystore.userKeys, deviceID: keystore.deviceID, deviceKey: keystore.deviceKey,
            baseURL: configuration.grantServiceURL, tls: configuration.tls,
            keyHistory: try KeyHistoryStore(path: configuration.keyHistoryPath),
            pins: try IdentityPins(path: configuration.identityPinsPath))
    }
}
