import Foundation
import RescindCrypto

/// The audit service's signing key, pinned on first use in the profile directory
/// (`audit-service.key`: the key in base64, 0600, written atomically), so that a later
/// `access-log --verify` checks the log against the key it saw first, not against whatever
/// key the service serves now.
public struct AuditKeyPin: Sendable {
    public static let fileName = "audit-service.key"
    public let path: String

    public init(directory: String) {
        path = (directory as NSString).appendingPathComponent(Self.fileName)
    }

    /// The audit service now serves another key than the pinned one.
    public struct Changed: Error, CustomStringConvertible, Sendable {
        public let pinned: String
        public let served: String
        public let path: String
        public var description: String {
            "the audit service now signs with key \(served), not the key \(pinned) pinned in \(path): refusing to verify. "
                + "If its operator rotated the key, compare the fingerprint with them and run again with --accept-new-audit-key"
        }
    }

    /// The pinned key, `nil` before the first use.
    /// - Throws: `AgentError` for a pin file others can read or that is not a key.
    public func pinned() throws -> Ed25519.PublicKey? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let bytes = try SecureFiles.readOwnerOnly(path, kind: "audit key pin")
        let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let raw = Data(base64Encoded: text), let key = try? Ed25519.PublicKey(rawRepresentation: [UInt8](raw)) else {
            throw AgentError(.configuration, "audit key pin \(path) does not hold an Ed25519 public key")
        }
        return key
    }

    /// Pins `key` (replacing any pin).
    public func pin(_ key: Ed25519.PublicKey) throws {
        try SecureFiles.writeOwnerOnly(Data((Data(key.rawRepresentation).base64EncodedString() + "\n").utf8), to: path)
    }
}
