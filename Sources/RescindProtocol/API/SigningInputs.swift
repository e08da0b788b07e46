import Foundation

extension RegisterUserRequest {
    /// What the identity key (and the recovery key, when one is registered) signs to prove
    /// possession: the whole request but the signatures, canonically encoded, under its own
    /// domain label.
    public func signingInput() throws -> [UInt8] {
        var unsigned = self
        unsigned.signature = Data()
        unsigned.recoverySignature = nil
        return Array("rescind-register-user-v1\n".utf8) + [UInt8](try CanonicalJSON.encode(unsigned))
    }
}

/// Device challenge–response: the device signs the challenge bound to its own id,
/// so an answer can be neither replayed (challenges are one-time) nor redirected.
public enum DeviceAuthentication {
    public static func signingInput(challengeID: UUID, deviceID: UUID, nonce: Data) -> [UInt8] {
        Array("rescind-device-auth-v1\n\(challengeID.uuidString.lowercased())\n\(deviceID.uuidString.lowercased())\n".utf8)
            + [UInt8](nonce)
    }
}
