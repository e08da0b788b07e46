import Foundation
import RescindConfiguration
import RescindCrypto

#if canImport(Glibc)
import Glibc
#endif

/// A service's Ed25519 signing key, kept as a 32-byte seed in a file that follows
/// `SecretFile`'s rule (a platform's mounted secret: root or this user as owner, nothing for
/// others). Whoever verifies the service's messages pins the matching public key.
public enum SigningKeyFile {
    /// Loads the key; when `createIfMissing`, first creates the file with a fresh seed (mode 0600).
    /// - Throws: `SigningKeyFileError` with the path and what is wrong (never the key).
    public static func load(path: String, createIfMissing: Bool) throws -> Ed25519.PrivateKey {
        let manager = FileManager.default
        // Only a path that is absent is created: a dangling or unreadable secret is reported, not replaced.
        var status = stat()
        if lstat(path, &status) != 0 && errno == ENOENT {
            guard createIfMissing else { throw SigningKeyFileError(path: path, problem: "does not exist") }
            let directory = (path as NSString).deletingLastPathComponent
            if !directory.isEmpty {
                try manager.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            }
            var seed = SecureRandom.bytes(count: Ed25519.seedByteCount)
            defer { seed.wipe() }
            guard manager.createFile(atPath: path, contents: Data(seed), attributes: [.posixPermissions: 0o600]) else {
                throw SigningKeyFileError(path: path, problem: "could not be created")
            }
        }
        var seed: [UInt8]
        do {
            seed = try SecretFile.read(path, byteCount: Ed25519.seedByteCount)
        } catch let error as SecretFileError {
            throw SigningKeyFileError(path: path, problem: error.problem.description)
        }
        defer { seed.wipe() }
        return try Ed25519.PrivateKey(seed: &seed)
    }
}

/// A key file that cannot be used, named by its path; the key itself is never shown.
public struct SigningKeyFileError: Error, CustomStringConvertible {
    public let path: String
    public let problem: String
    public var description: String { "signing key file \(path) \(problem)" }
}
