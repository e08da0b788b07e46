import Foundation
import RescindConfiguration

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Owner-only files and directories: the data directory is 0700, key material 0600, and the
/// agent refuses to run on anything another user could read or that another user owns. These
/// are the files the agent writes for itself; a secret it is given (its key file or passphrase
/// file, possibly a platform's mounted secret) is read by `readMountedSecret`, under
/// `SecretFile`'s rule instead.
package enum SecureFiles {
    /// Creates `path` (and parents) as 0700 if missing, then checks it.
    package static func prepareDirectory(_ path: String) throws {
        if !FileManager.default.fileExists(atPath: path) {
            do {
                try FileManager.default.createDirectory(
                    atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw AgentError(.storage, "cannot create the data directory \(path)")
            }
        }
        try checkOwnerOnly(path, kind: "data directory", fix: "chmod 700")
    }

    /// Fails unless `path` belongs to this user and grants nothing to group or others.
    /// - Parameter kind: names the file in the message ("key file", "passphrase file", …).
    package static func checkOwnerOnly(_ path: String, kind: String, fix: String = "chmod 600") throws {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw AgentError(.configuration, "\(kind) \(path) is missing or unreadable")
        }
        try check(info, path: path, kind: kind, fix: fix)
    }

    private static func check(_ info: stat, path: String, kind: String, fix: String) throws {
        guard info.st_uid == geteuid() else {
            throw AgentError(.insecurePermissions, "\(kind) \(path) belongs to another user; refusing to start")
        }
        let mode = info.st_mode & 0o777
        guard mode & 0o077 == 0 else {
            throw AgentError(
                .insecurePermissions,
                "\(kind) \(path) is accessible by other users (mode \(String(mode, radix: 8))); run `\(fix) \(path)`")
        }
    }

    /// Creates an empty 0600 file unless it exists (so that SQLite, which keeps an existing
    /// file's mode for the database and its journal, never creates them world-readable).
    package static func createOwnerOnlyFile(_ path: String) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw AgentError(.storage, "cannot create \(path)") }
        close(descriptor)
    }

    /// Writes `data` to `path` atomically (temporary 0600 file, fsync, rename).
    package static func writeOwnerOnly(_ data: Data, to path: String) throws {
        let temporary = path + ".tmp-\(getpid())"
        unlink(temporary)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw AgentError(.storage, "cannot create \(temporary)") }
        let written = data.withUnsafeBytes { bytes in
            bytes.isEmpty ? 0 : write(descriptor, bytes.baseAddress, bytes.count)
        }
        let synced = fsync(descriptor) == 0
        close(descriptor)
        guard written == data.count, synced, rename(temporary, path) == 0 else {
            unlink(temporary)
            throw AgentError(.storage, "cannot write \(path)")
        }
    }

    /// Reads a secret the agent is given rather than one it wrote: `SecretFile`'s rule (symbolic
    /// links followed, owned by root or this user, group may read, others nothing), so that a
    /// Kubernetes Secret (root-owned, 0440 with the pod's fsGroup) or a Compose secret is usable.
    /// - Parameter byteCount: the exact size of a key, or `nil` for a passphrase.
    /// - Throws: `AgentError` (`.insecurePermissions` when others can reach it or another user
    ///   owns it, `.configuration` otherwise) naming `kind`, the path and what is wrong.
    package static func readMountedSecret(_ path: String, kind: String, byteCount: Int? = nil) throws -> [UInt8] {
        do {
            return try SecretFile.read(path, byteCount: byteCount)
        } catch let error as SecretFileError {
            throw AgentError(error.problem.isInsecure ? .insecurePermissions : .configuration, "\(kind) \(path) \(error.problem)")
        }
    }

    /// Reads a secret file after checking, on the opened descriptor, that only its owner can
    /// reach it. The bytes go straight into the returned array (no intermediate `Data`), so a
    /// caller that moves them into guarded memory leaves no other copy behind.
    package static func readOwnerOnly(_ path: String, kind: String) throws -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw AgentError(.configuration, "\(kind) \(path) is missing or unreadable") }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw AgentError(.configuration, "\(kind) \(path) cannot be read") }
        try check(info, path: path, kind: kind, fix: "chmod 600")
        guard info.st_size <= 1 << 20 else { throw AgentError(.configuration, "\(kind) \(path) is too large") }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        var filled = 0
        while filled < bytes.count {
            let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + filled, $0.count - filled) }
            guard count > 0 else { throw AgentError(.configuration, "\(kind) \(path) cannot be read") }
            filled += count
        }
        return bytes
    }
}
