import Foundation
import RescindClient
import RescindCrypto
import RescindDevKit
import RescindTLS
import RescindTestSupport
import Testing

@testable import DeviceAgent

#if canImport(Glibc)
import Glibc
#endif

/// The agent's key file as platforms mount it (`SecretFile`'s rule): the agent, run as the
/// pod's user on a data directory of its own, unlocks its keystore with a key file from a
/// Kubernetes Secret (root-owned, 0440 with the fsGroup) and names one it cannot read. Its own
/// data directory and keystore stay owner-only.
@Suite("Secrets as platforms mount them: the agent's key file", .serialized,
       .enabled(if: MountedSecrets.isRoot && AgentProcess.executable != nil))
struct MountedKeyFileTests {
    /// A keystore under `secrets` (searchable by everyone), locked by `keyFile`, its data
    /// directory handed to the pod's user as the agent's first start would have made it.
    static func enrolledDevice(_ secrets: MountedSecrets, keyFile: String) async throws -> AgentConfiguration {
        var configuration = AgentConfiguration(
            dataDirectory: secrets.directory.appendingPathComponent("data").path, grantServiceURL: URL(string: "http://127.0.0.1:9")!,
            grantServiceKey: Ed25519.PrivateKey().publicKey, kafka: .init(bootstrapServers: "127.0.0.1:9"), unlock: .keyFile(keyFile))
        configuration.tls = ClientTLS(plainHTTP: .loopback)
        configuration.keyDerivation = .init(opsLimit: 1, memLimit: 8 << 20)
        try SecureFiles.prepareDirectory(configuration.dataDirectory)
        try await Keystore(userKeys: .generate(), deviceID: UUID(), deviceKey: Ed25519.PrivateKey(), storageKey: SecretKey())
            .write(to: configuration.keystorePath, unlock: configuration.unlock, cost: configuration.keyDerivation)
        for path in [configuration.dataDirectory, configuration.keystorePath] {
            guard chown(path, MountedSecrets.podUser, MountedSecrets.podUser) == 0 else { throw CancellationError() }
        }
        return configuration
    }

    static func asPodUser(_ arguments: [String], groups: [UInt32]) -> [String] {
        ["--reuid=\(MountedSecrets.podUser)", "--regid=\(MountedSecrets.podUser)"]
            + (groups.isEmpty ? ["--clear-groups"] : ["--groups=" + groups.map(String.init).joined(separator: ",")])
            + ["--", AgentProcess.executable!.path] + arguments
    }

    @Test("rescind-agent as the pod's user unlocks with a key file from a Kubernetes Secret and starts")
    func startsFromAKubernetesSecret() async throws {
        let secrets = try MountedSecrets()
        defer { secrets.remove() }
        let keyFile = try secrets.kubernetes(volume: "agent", key: "key", contents: Data(SecureRandom.bytes(count: 32)), mode: 0o440)
        let configuration = try await Self.enrolledDevice(secrets, keyFile: keyFile)
        let agent = try AgentProcess(
            Self.asPodUser(["run"], groups: [MountedSecrets.fsGroup]),
            environment: AgentProcess.environment(configuration, unlock: ["RESCIND_AGENT_KEY_FILE": keyFile]),
            executable: ChildProcess.setpriv)
        try await agent.waitFor("device agent starting")
        agent.signal(SIGTERM)
        _ = try await agent.exitStatus()
        #expect(!agent.text.contains("key file"), "\(agent.text)")
    }

    @Test("a Secret without the fsGroup, open to others or of the wrong size: the agent says which and exits 1")
    func refusals() async throws {
        let secrets = try MountedSecrets()
        defer { secrets.remove() }
        let key = Data(SecureRandom.bytes(count: 32))
        let keyFile = try secrets.kubernetes(volume: "agent", key: "key", contents: key, mode: 0o440)
        let configuration = try await Self.enrolledDevice(secrets, keyFile: keyFile)
        let noFSGroup = try secrets.kubernetes(volume: "no-fsgroup", key: "key", contents: key, mode: 0o400, group: 0)
        let open = try secrets.kubernetes(volume: "open", key: "key", contents: key, mode: 0o444)
        let short = try secrets.kubernetes(volume: "short", key: "key", contents: key.prefix(16), mode: 0o440)
        let cases: [(String, String)] = [
            (noFSGroup, "is not readable by this process (uid 10001, gid 10001) (owner uid 0, group gid 0, mode 0400): "
                + "let this user own it or give it a group this user is in (Kubernetes: the pod's fsGroup, defaultMode 0440)"),
            (open, "is open to other users (mode 0444): allow others nothing (chmod o-rwx; 0600, or 0440 for its group)"),
            (short, "holds 16 bytes; a key file holds exactly 32"),
        ]
        for (path, problem) in cases {
            let agent = try AgentProcess(
                Self.asPodUser(["run"], groups: [MountedSecrets.fsGroup]),
                environment: AgentProcess.environment(configuration, unlock: ["RESCIND_AGENT_KEY_FILE": path]),
                executable: ChildProcess.setpriv)
            #expect(try await agent.exitStatus() == 1)
            #expect(agent.text == "rescind-agent: key file \(path) \(problem)\n")
        }
    }
}
