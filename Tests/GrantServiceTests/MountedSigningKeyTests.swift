import Foundation
import RescindCrypto
import RescindDevKit
import RescindServiceSupport
import RescindTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A service's signing key as platforms mount it (`SecretFile`'s rule, through the loader both
/// services use): a Kubernetes Secret and a Compose secret are accepted, and every refusal says
/// what is wrong. Laying out root-owned files needs root, as the suite runs here.
@Suite("Secrets as platforms mount them: the signing key", .serialized, .enabled(if: MountedSecrets.isRoot))
struct MountedSigningKeyTests {
    static func seed() -> (Data, Ed25519.PublicKey) {
        var bytes = SecureRandom.bytes(count: Ed25519.seedByteCount)
        let data = Data(bytes)
        return (data, try! Ed25519.PrivateKey(seed: &bytes).publicKey)
    }

    @Test("a Kubernetes Secret (..data symlinks, root-owned, 0440 with the fsGroup or 0400) and Compose secrets load")
    func acceptedLayouts() throws {
        let secrets = try MountedSecrets()
        defer { secrets.remove() }
        let (seed, publicKey) = Self.seed()
        let paths = [
            try secrets.kubernetes(volume: "grant-signing-key", key: "key", contents: seed, mode: 0o440),
            try secrets.kubernetes(volume: "no-fsgroup", key: "key", contents: seed, mode: 0o400, group: 0),
            try secrets.compose(name: "grant_signing_key", contents: seed, mode: 0o400),
            try secrets.compose(name: "grant_signing_key_600", contents: seed, mode: 0o600),
            // This process's own file, readable by a group: still nothing for others.
            try secrets.file("own-0640", contents: seed, mode: 0o640, owner: geteuid(), group: 4242),
        ]
        #expect(try FileManager.default.attributesOfItem(atPath: paths[0])[.type] as? FileAttributeType == .typeSymbolicLink)
        for path in paths {
            let key = try SigningKeyFile.load(path: path, createIfMissing: false)
            #expect(key.publicKey == publicKey, "\(path)")
        }
        // A mounted secret is never replaced, even when the service may create its key.
        #expect(try SigningKeyFile.load(path: paths[0], createIfMissing: true).publicKey == publicKey)
    }

    @Test("open to others, another user's, the wrong size, not a file, missing: each refusal says which")
    func refusals() throws {
        let secrets = try MountedSecrets()
        defer { secrets.remove() }
        let (seed, _) = Self.seed()
        let dangling = try secrets.kubernetes(volume: "dangling", key: "key", contents: seed)
        try FileManager.default.removeItem(at: secrets.directory.appendingPathComponent("dangling/..2026_11_29_03_00_00.123456789"))
        let directory = secrets.directory.appendingPathComponent("a-directory").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        let cases: [(String, String)] = [
            (try secrets.kubernetes(volume: "world", key: "key", contents: seed, mode: 0o444),
             "is open to other users (mode 0444): allow others nothing (chmod o-rwx; 0600, or 0440 for its group)"),
            (try secrets.compose(name: "others-write", contents: seed, mode: 0o602),
             "is open to other users (mode 0602): allow others nothing (chmod o-rwx; 0600, or 0440 for its group)"),
            (try secrets.file("stranger", contents: seed, mode: 0o600, owner: 4242, group: 4242),
             "belongs to uid 4242: a secret file must belong to root or to this process's user (uid \(geteuid()))"),
            (try secrets.compose(name: "short", contents: seed.prefix(31), mode: 0o400), "holds 31 bytes; a key file holds exactly 32"),
            (try secrets.compose(name: "newline", contents: seed + Data("\n".utf8), mode: 0o400), "holds 33 bytes; a key file holds exactly 32"),
            (directory, "is not a regular file"),
            (dangling, "does not exist"),
            (secrets.directory.appendingPathComponent("missing").path, "does not exist"),
        ]
        for (path, problem) in cases {
            let error = #expect(throws: SigningKeyFileError.self) { try SigningKeyFile.load(path: path, createIfMissing: false) }
            #expect(error?.description == "signing key file \(path) \(problem)")
        }
    }

    /// The real executable, started as the pod's user (uid 10001, the fsGroup its only extra
    /// group) with its key in a Secret volume: it gets past the key and stops only at the
    /// database this test gives it (none); from a Secret it cannot open it names that.
    @Test("rescind-grant-service as the pod's user reads its key from a Secret and names one it cannot read")
    func theServiceAsThePodsUser() async throws {
        let executable = try #require(MountedSecrets.builtExecutable("rescind-grant-service"), "rescind-grant-service is not built next to the tests")
        let secrets = try MountedSecrets()
        defer { secrets.remove() }
        let (seed, _) = Self.seed()
        func run(_ keyFile: String, groups: [UInt32]) async throws -> ChildProcess.Result {
            try await MountedSecrets.runAsPodUser(
                executable, [],
                environment: [
                    "PATH": "/usr/bin:/bin",
                    "RESCIND_GRANT_SIGNING_KEY_FILE": keyFile, "RESCIND_GRANT_CREATE_SIGNING_KEY": "false",
                    "RESCIND_GRANT_HOST": "127.0.0.1", "RESCIND_GRANT_PORT": "0",
                    "RESCIND_DATABASE_URL": "postgres://nobody@127.0.0.1:1/none", "RESCIND_DATABASE_TIMEOUT_SECONDS": "2",
                    "RESCIND_KAFKA_BOOTSTRAP_SERVERS": "127.0.0.1:1",
                ],
                supplementaryGroups: groups, timeout: .seconds(60))
        }

        let mounted = try secrets.kubernetes(volume: "grant-signing-key", key: "key", contents: seed, mode: 0o440)
        let accepted = try await run(mounted, groups: [MountedSecrets.fsGroup])
        #expect(!accepted.timedOut && accepted.status == 1, "\(accepted.output)")
        // Past the key, the first thing it opens: the database (none here).
        #expect(accepted.output.hasPrefix("rescind-grant-service: PostgresError.connectionFailed"), "\(accepted.output)")

        let noFSGroup = try secrets.kubernetes(volume: "no-fsgroup", key: "key", contents: seed, mode: 0o400, group: 0)
        let refused = try await run(noFSGroup, groups: [])
        #expect(refused.status == 1)
        #expect(
            refused.output == "rescind-grant-service: signing key file \(noFSGroup) is not readable by this process (uid 10001, gid 10001) "
                + "(owner uid 0, group gid 0, mode 0400): let this user own it or give it a group this user is in "
                + "(Kubernetes: the pod's fsGroup, defaultMode 0440)\n")

        let composeRootOnly = try secrets.compose(name: "grant_signing_key", contents: seed, mode: 0o600)
        let composeRefused = try await run(composeRootOnly, groups: [])
        #expect(composeRefused.output.contains("signing key file \(composeRootOnly) is not readable by this process (uid 10001"))
    }
}
