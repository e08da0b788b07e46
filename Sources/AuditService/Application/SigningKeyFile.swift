import Foundation
import RescindCrypto

/// The audit service's Ed25519 key (a 32-byte seed in a file only its owner may read):
/// it signs notifications and audit entries. Same format and rules as the grant
/// service's key file (candidate for a shared module).
enum SigningKeyFile {
    /// Loads the key; when `createIfMissing`, first creates the file with a fresh seed (mode 0600).
    /// - Throws: `AuditServiceError.configuration` naming the path and the problem (never the key).
    static func load(path: String, createIfMissing: Bool) throws -> Ed25519.PrivateKey {
        let manager = FileManager.default
        if !manager.fileExists(atPath: path) {
            guard createIfMissing else { throw AuditServiceError.configuration("signing key file \(path) does not exist") }
            let directory = (path as NSString).deletingLastPathComponent
            if !directory.isEmpty {
                try manager.createDirectory(
                    atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            }
            var seed = SecureRandom.bytes(count: Ed25519.seedByteCount)
            defer { _ = seed.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: 0) } }
            guard manager.createFile(atPath: path, contents: Data(seed), attributes: [.posixPermissions: 0o600]) else {
                throw AuditServiceError.configuration("signing key file \(path) could not be created")
            }
        }
        let attributes = try manager.attributesOfItem(atPath: path)
        if let mode = attributes[.posixPermissions] as? Int, mode & 0o077 != 0 {
            throw AuditServiceError.configuration("signing key file \(path) is readable by other users (chmod 600 it)")
        }
        guard let data = manager.contents(atPath: path), data.count == Ed25519.seedByteCount else {
            throw AuditServiceError.configuration("signing key file \(path) must hold exactly \(Ed25519.seedByteCount) bytes")
        }
        var seed = [UInt8](data)
        return try Ed25519.PrivateKey(seed: &seed)
    }
}
