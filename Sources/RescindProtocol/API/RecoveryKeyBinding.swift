import Foundation
import RescindCrypto

/// A user's identity key vouching for their recovery public key: its Ed25519 signature over
/// the user, the identity key and the recovery key.
///
/// A client names its user's recovery key in a key statement (`create`, `adopt`), where it lets
/// the recovery key hand a family member over at once, only when the service shows this
/// signature by the identity key the client holds itself. A grant service that swapped the
/// registered key for one of its own cannot make the signature. The device that knows both keys
/// makes it: at registration, with a new recovery key, and at an identity rotation (the new
/// identity key vouching for the recovery key the old one vouched for).
public enum RecoveryKeyBinding {
    struct Signed: Encodable {
        let userID: UUID
        let identityPublicKey: Data
        let recoveryPublicKey: Data

    }

    /// A domain label, a newline, the canonical JSON of the user and the two keys.
    public static func signingInput(userID: UUID, identityPublicKey: Data, recoveryPublicKey: Data) throws -> [UInt8] {
        Array("rescind.recovery_key_binding.v1\n".utf8)
            + [UInt8](try CanonicalJSON.encode(
                Signed(userID: userID, identityPublicKey: identityPublicKey, recoveryPublicKey: recoveryPublicKey)))
    }

    /// The binding of `recoveryPublicKey` to `identityKey`'s user.
    public static func sign(userID: UUID, identityKey: Ed25519.PrivateKey, recoveryPublicKey: Data) throws -> Data {
        Data(identityKey.signature(for: try signingInput(
            userID: userID, identityPublicKey: Data(identityKey.publicKey.rawRepresentation), recoveryPublicKey: recoveryPublicKey)))
    }

    /// Whether `signature` is `identityPublicKey`'s binding of `recoveryPublicKey` for `userID`;
    /// false for a malformed key or signature.
    public static func isValid(_ signature: Data, userID: UUID, identityPublicKey: Data, recoveryPublicKey: Data) -> Bool {
        guard let key = try? Ed25519.PublicKey(rawRepresentation: [UInt8](identityPublicKey)),
              let input = try? signingInput(userID: userID, identityPublicKey: identityPublicKey, recoveryPublicKey: recoveryPublicKey)
        else { return false }
        return key.isValidSignature([UInt8](signature), for: input)
    }
}
