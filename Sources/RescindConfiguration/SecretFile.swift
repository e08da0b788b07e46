import Foundation
import RescindMacros

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one rule for a secret (a signing key, a key-encryption key, a passphrase, a token) that a
/// process reads from a file someone else provisioned: a platform's mounted secret, an
/// operator's key file.
///
/// Platforms mount secrets in ways a strict "owner only, 0600" check refuses: Kubernetes
/// exposes a Secret key as `name -> ..data/name` with `..data -> ..<timestamp>/`, the file
/// root-owned with the pod's `fsGroup` and mode 0440 (or 0400 and unreadable without one);
/// Compose's file secrets keep the host file's owner and mode. So the rule is PostgreSQL's for
/// its TLS key:
///
/// - symbolic links are followed (the file is opened, then checked through its descriptor, so
///   what is checked is what is read);
/// - it must be a regular file owned by root or by this process's effective user;
/// - others may not read, write or run it (`mode & 0o007 == 0`); its group may read it.
///
/// Files a program writes for itself (the agent's keystore and data directory) keep their own,
/// stricter owner-only rule: this one is for what the process is given.
public enum SecretFile {
    /// Larger files are refused before they are read: no secret here is near this size.
    public static let maximumByteCount = 1 << 20

    /// Reads the whole file.
    /// - Parameter byteCount: the exact size a key must have, or `nil` for any size up to
    ///   `maximumByteCount`.
    /// - Returns: the bytes, read straight into the array (no intermediate copy); a caller that
    ///   holds a key zeroes it when done.
    /// - Throws: `SecretFileError` saying what is wrong (never the contents).
    public static func read(_ path: String, byteCount: Int? = nil) throws -> [UInt8] {
        // O_NONBLOCK: a FIFO planted at the path must not hang the start; it is refused below.
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { throw SecretFileError(path: path, problem: openFailure(path, errno: errno)) }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw SecretFileError(path: path, problem: .cannotRead(reason: String(cString: strerror(errno))))
        }
        try check(info, path: path)
        let size = Int(info.st_size)
        guard size <= maximumByteCount else { throw SecretFileError(path: path, problem: .tooLarge(bytes: size)) }
        if let byteCount, size != byteCount {
            throw SecretFileError(path: path, problem: .wrongSize(bytes: size, expected: byteCount))
        }
        var bytes = [UInt8](repeating: 0, count: size)
        var filled = 0
        while filled < size {
            let count = bytes.withUnsafeMutableBytes { readFile(descriptor, $0.baseAddress! + filled, size - filled) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                bytes.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: 0) }
                throw SecretFileError(path: path, problem: .cannotRead(reason: count == 0 ? "it shrank while read" : String(cString: strerror(errno))))
            }
            filled += count
        }
        return bytes
    }

    /// The rule itself, on the file's status as `fstat` (or `stat`, never `lstat`) reports it.
    static func check(_ info: stat, path: String) throws {
        guard info.st_mode & S_IFMT == S_IFREG else { throw SecretFileError(path: path, problem: .notRegularFile) }
        let user = geteuid()
        guard info.st_uid == 0 || info.st_uid == user else {
            throw SecretFileError(path: path, problem: .wrongOwner(owner: info.st_uid, user: user))
        }
        let mode = info.st_mode & 0o7777
        guard mode & 0o007 == 0 else { throw SecretFileError(path: path, problem: .tooOpen(mode: mode)) }
    }

    private static func openFailure(_ path: String, errno code: Int32) -> SecretFileError.Problem {
        switch code {
        case ENOENT, ENOTDIR:
            return .notFound
        case EACCES, EPERM:
            var info = stat()
            let known = stat(path, &info) == 0
            return .notReadable(
                user: geteuid(), group: getegid(), owner: known ? info.st_uid : nil, fileGroup: known ? info.st_gid : nil,
                mode: known ? info.st_mode & 0o7777 : nil)
        default:
            return .cannotRead(reason: String(cString: strerror(code)))
        }
    }
}

/// `read(2)`, named apart from `SecretFile.read`.
private func readFile(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
    Glibc.read(descriptor, buffer, count)
    #else
    Darwin.read(descriptor, buffer, count)
    #endif
}

/// A secret file that cannot be used, named by its path; its contents are never shown.
@MemberwiseInit
public struct SecretFileError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Problem: Sendable, Equatable, CustomStringConvertible {
        case notFound
        /// This process may not open it (the owner, group and mode, when `stat` could see them).
        case notReadable(user: uid_t, group: gid_t, owner: uid_t?, fileGroup: gid_t?, mode: mode_t?)
        case notRegularFile
        /// Owned by someone other than root or this process's user.
        case wrongOwner(owner: uid_t, user: uid_t)
        /// Others may read, write or run it.
        case tooOpen(mode: mode_t)
        case tooLarge(bytes: Int)
        /// A key of `expected` bytes is held in a file of another size.
        case wrongSize(bytes: Int, expected: Int)
        case cannotRead(reason: String)

        /// The file is reachable by someone it should not be, rather than missing or malformed.
        public var isInsecure: Bool {
            switch self {
            case .wrongOwner, .tooOpen: true
            default: false
            }
        }

        public var description: String {
            switch self {
            case .notFound:
                return "does not exist"
            case .notReadable(let user, let group, let owner, let fileGroup, let mode):
                let seen = owner.map { owner in
                    " (owner uid \(owner), group gid \(fileGroup.map { "\($0)" } ?? "?"), mode \(mode.map(SecretFileError.octal) ?? "?"))"
                } ?? ""
                return "is not readable by this process (uid \(user), gid \(group))\(seen): "
                    + "let this user own it or give it a group this user is in (Kubernetes: the pod's fsGroup, defaultMode 0440)"
            case .notRegularFile:
                return "is not a regular file"
            case .wrongOwner(let owner, let user):
                return "belongs to uid \(owner): a secret file must belong to root or to this process's user (uid \(user))"
            case .tooOpen(let mode):
                return "is open to other users (mode \(SecretFileError.octal(mode))): allow others nothing (chmod o-rwx; 0600, or 0440 for its group)"
            case .tooLarge(let bytes):
                return "is too large (\(bytes) bytes) for a secret"
            case .wrongSize(let bytes, let expected):
                return "holds \(bytes) bytes; a key file holds exactly \(expected)"
            case .cannotRead(let reason):
                return "cannot be read (\(reason))"
            }
        }
    }

    public let path: String
    public let problem: Problem

    public var description: String { "\(path) \(problem)" }

    static func octal(_ mode: mode_t) -> String {
        let digits = String(mode, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
