import Foundation
import RescindMacros

/// A user's private keys escrowed to their recovery key (`KeyEscrow`): `PUT /v1/key-backup`
/// stores it, `GET /v1/key-backup` gives it to any active device of the user — such as one the
/// recovery key just enrolled on a new machine, with every other device lost or stolen.
///
/// Only the holder of the recovery words can make one: the recovery key signs it, and the
/// service keeps it only for the user's current identity and agreement keys and registered
/// recovery key. So neither a thief holding a device nor the service can plant a backup the
/// recovery key would open as the user's; the opener checks the signature with its own key.
@MemberwiseInit
public struct KeyBackup: Codable, Sendable, Equatable {
    public var userID: UUID
    /// The public halves of the keys inside, as registered for the user when it was made.
    public var identityPublicKey: Data
    public var agreementPublicKey: Data
    /// The recovery key that signed it and whose escrow key opens it.
    public var recoveryPublicKey: Data
    /// The sealing side's one-time X25519 key.
    public var ephemeralPublicKey: Data
    /// The user's private keys, each AES-256-KW wrapped (40 bytes) under the escrow KEK.
    public var agreementKey: Data
    public var identityKey: Data
    public var masterKey: Data
    /// The recovery key's Ed25519 signature over `signingInput()`.
    public var signature: Data = Data()


    /// What the recovery key signs: `rescind-key-backup-v1\n` and the canonical JSON of every
    /// field but the signature.
    public func signingInput() throws -> [UInt8] {
        var unsigned = self
        unsigned.signature = Data()
        return Array("rescind-key-backup-v1\n".utf8) + [UInt8](try CanonicalJSON.encode(unsigned))
    }
}
