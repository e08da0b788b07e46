import Foundation
import RescindCrypto

/// A service's Ed25519 signing key, kept as a 32-byte seed in a file readable by its
/// owner only. Whoever verifies the service's messages pins the matching public key.
public enum SigningKeyFile {
    /// Loads the key; when `createIfMissing`, first creates the file with a fresh seed (mode 0600).
    /// - Throws: `SigningKeyFileError` with the path and what is wrong (never the key).
    public static func load(path: String, createIfMissing: Bool) throws -> Ed25519.PrivateKey {
        let manager = FileManager.default
        if !manager.fileExists(atPath: path) {
            guard createIfMissing else { throw SigningKeyFileError(path: path, problem: "does not exist") }
            let directory = (path as NSString).deletingLastPathComponent
            if !directory.isEmpty {
                try manager.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            }
            var seed = SecureRandom.bytes(count: Ed25519.seedByteCount)
            defer { seed.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: 0) } }
            guard manager.createFile(atPath: path, contents: Data(seed), attributes: [.posixPermissions: 0o600]) else {
                throw SigningKeyFileError(path: path, problem: "could not be created")
            }
        }
        let attributes = try manager.attributesOfItem(atPath: path)
        if let mode = attributes[.posixPermissions] as? Int, mode & 0o077 != 0 {
            throw SigningKeyFileError(path: path, problem: "is readable by other users (chmod 600 it)")
        }
        guard let data = manager.contents(atPath: path), data.count == Ed25519.seedByteCount else {
            throw SigningKeyFileError(path: path, problem: "must hold exactly \(Ed25519.seedByteCount) bytes")
        }
        var seed = [UInt8](data)
        return try Ed25519.PrivateKey(seed: &seed)
    }
}

/// A key file that cannot be used, named by its path; the key itself is never shown.
public struct SigningKeyFileError: Error, CustomStringConvertible {
    public let path: String
    public let problem: String
    public var description: String { "signing key file \(path) \(problem)" }
}
