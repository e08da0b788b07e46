import Foundation
import RescindDevKit

#if canImport(Glibc)
import Glibc
#endif

/// Secret files laid out exactly as platforms mount them, for the tests of `SecretFile`'s rule
/// and of the programs that read keys and tokens through it. Laying out root-owned files and
/// running a program as the pod's user need root: `isRoot` says whether the tests can.
public struct MountedSecrets: Sendable {
    /// The user the images and manifests run as.
    public static let podUser: UInt32 = 10001
    /// The pods' `fsGroup` in deploy/k8s: the group a Secret's files get.
    public static let fsGroup: UInt32 = 10001
    public static var isRoot: Bool { geteuid() == 0 }

    /// Holds every volume; searchable by everyone so that the pod's user reaches its files.
    public let directory: URL

    public init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("rescind-secrets-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
    }

    public func remove() {
        try? FileManager.default.removeItem(at: directory)
    }

    /// A Secret volume as the kubelet's atomic writer makes it: `<volume>/<key> -> ..data/<key>`,
    /// `..data -> ..2026_11_29_03_00_00.123456789`, the file in that directory owned by root
    /// with `group` (the pod's fsGroup; 0 without one) and `mode` (the volume's defaultMode,
    /// 0440 when an fsGroup is set). The volume directory is root's, sticky and world-writable
    /// as on the tmpfs the kubelet mounts.
    /// - Returns: the path a program is given (`<volume>/<key>`).
    public func kubernetes(volume: String, key: String, contents: Data, mode: Int = 0o440, group: UInt32 = fsGroup) throws -> String {
        let manager = FileManager.default
        let mount = directory.appendingPathComponent(volume)
        let timestamped = "..2026_11_29_03_00_00.123456789"
        let data = mount.appendingPathComponent(timestamped)
        try manager.createDirectory(at: data, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        try manager.setAttributes([.posixPermissions: 0o1777], ofItemAtPath: mount.path)
        let file = data.appendingPathComponent(key)
        guard manager.createFile(atPath: file.path, contents: contents) else { throw Failure("cannot write \(file.path)") }
        try own(file.path, owner: 0, group: group, mode: mode)
        let link = mount.appendingPathComponent("..data")
        if (try? manager.destinationOfSymbolicLink(atPath: link.path)) == nil {
            try manager.createSymbolicLink(atPath: link.path, withDestinationPath: timestamped)
        }
        let path = mount.appendingPathComponent(key).path
        try manager.createSymbolicLink(atPath: path, withDestinationPath: "..data/" + key)
        return path
    }

    /// A Compose file secret: the host file bind-mounted at `/run/secrets/<name>`, keeping the
    /// host's owner, group and mode (0400 root when an operator wrote it as root).
    public func compose(name: String, contents: Data, mode: Int = 0o400, owner: UInt32 = 0, group: UInt32 = 0) throws -> String {
        let secrets = directory.appendingPathComponent("run-secrets")
        try FileManager.default.createDirectory(at: secrets, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        let path = secrets.appendingPathComponent(name).path
        guard FileManager.default.createFile(atPath: path, contents: contents) else { throw Failure("cannot write \(path)") }
        try own(path, owner: owner, group: group, mode: mode)
        return path
    }

    /// A plain file with this owner, group and mode (a refused layout, or a data directory).
    public func file(_ name: String, contents: Data, mode: Int, owner: UInt32 = 0, group: UInt32 = 0) throws -> String {
        let path = directory.appendingPathComponent(name).path
        guard FileManager.default.createFile(atPath: path, contents: contents) else { throw Failure("cannot write \(path)") }
        try own(path, owner: owner, group: group, mode: mode)
        return path
    }

    public func own(_ path: String, owner: UInt32, group: UInt32, mode: Int) throws {
        guard chown(path, owner, group) == 0, chmod(path, mode_t(mode)) == 0 else {
            throw Failure("cannot give \(path) owner \(owner):\(group), mode \(String(mode, radix: 8)): \(String(cString: strerror(errno)))")
        }
    }

    /// Runs `executable arguments…` as the pod's user, as the kubelet starts a container with
    /// `runAsUser`/`runAsGroup` 10001 and `fsGroup` as a supplementary group (`supplementaryGroups`
    /// empty: no fsGroup). No capability survives the change of user.
    public static func runAsPodUser(
        _ executable: URL, _ arguments: [String], environment: [String: String], supplementaryGroups: [UInt32] = [fsGroup],
        timeout: Duration = .seconds(60)
    ) async throws -> ChildProcess.Result {
        let groups = supplementaryGroups.isEmpty ? ["--clear-groups"] : ["--groups=" + supplementaryGroups.map(String.init).joined(separator: ",")]
        return try await ChildProcess.run(
            ChildProcess.setpriv,
            ["--reuid=\(podUser)", "--regid=\(podUser)"] + groups + ["--", executable.path] + arguments,
            environment: environment, directory: URL(fileURLWithPath: "/"), timeout: timeout)
    }

    /// An executable built next to the running tests (`rescind-grant-service`, …), if there.
    public static func builtExecutable(_ name: String) -> URL? {
        let url = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name)
        return FileManager.default.isExecutableFile(atPath: url.path) ? url : nil
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
