import Foundation
import RescindCrypto
import RescindMacros

/// A user's secret keys, as their devices hold them: the X25519 key FMKs are
/// wrapped to, the Ed25519 identity key, and the master key owner copies are
/// wrapped under. None of them ever leaves the device.
@MemberwiseInit
public struct UserKeys: Sendable {
    public let userID: UUID
    public let agreementKey: X25519.PrivateKey
    public let identityKey: Ed25519.PrivateKey
    public let masterKey: SecretKey

    /// Fresh random keys for a new user.
    public static func generate(userID: UUID = UUID()) -> UserKeys {
        UserKeys(userID: userID, agreementKey: X25519.PrivateKey(), identityKey: Ed25519.PrivateKey(), masterKey: SecretKey())
    }
}
