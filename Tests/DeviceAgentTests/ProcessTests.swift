import Foundation
import RescindClient
import RescindCrypto
import RescindProtocol
import RescindTestSupport
import Testing

@testable import DeviceAgent

#if canImport(Glibc)
import Glibc
import RescindTLS
#endif

/// The `rescind-agent` executable as an operator runs it: environment configuration,
/// one-line refusals, SIGTERM, and SIGKILL at any moment.
@Suite("rescind-agent process", .serialized, .enabled(if: AgentProcess.executable != nil))
struct ProcessTests {
    /// A keystore written locally (no grant service needed to be refused).
    static func offlineConfiguration(_ directory: TemporaryDirectory, unlock: AgentConfiguration.Unlock) async throws -> AgentConfiguration {
        var configuration = AgentConfiguration(
            dataDirectory: directory.file("data"), grantServiceURL: URL(string: "http://127.0.0.1:9")!,
            grantServiceKey: Ed25519.PrivateKey().publicKey, kafka: .init(bootstrapServers: "127.0.0.1:9"), unlock: unlock)
        configuration.tls = ClientTLS(plainHTTP: .loopback)
        configuration.keyDerivation = .init(opsLimit: 1, memLimit: 8 << 20)
        try SecureFiles.prepareDirectory(configuration.dataDirectory)
        try await Keystore(userKeys: .generate(), deviceID: UUID(), deviceKey: Ed25519.PrivateKey(), storageKey: SecretKey())
            .write(to: configuration.keystorePath, unlock: unlock, cost: configuration.keyDerivation)
        return configuration
    }

    @Test("a wrong passphrase, an open key file, an open data directory or a missing setting: one clear line, exit 1")
    func refusals() async throws {
        try await TemporaryDirectory.with { directory in
            let configuration = try await Self.offlineConfiguration(directory, unlock: .passphrase(AgentTestKit.passphrase))
            var (status, output) = try await AgentProcess.run(
                ["run"], environment: AgentProcess.environment(configuration, unlock: ["RESCIND_AGENT_PASSPHRASE": "not it"]))
            #expect(status == 1)
            #expect(output == "rescind-agent: wrong passphrase or key file for \(configuration.keystorePath)\n")

            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: configuration.dataDirectory)
            (status, output) = try await AgentProcess.run(["run"], environment: AgentProcess.environment(configuration))
            #expect(status == 1)
            #expect(output == "rescind-agent: data directory \(configuration.dataDirectory) is accessible by other users (mode 755); run `chmod 700 \(configuration.dataDirectory)`\n")

            var environment = AgentProcess.environment(configuration)
            environment["RESCIND_AGENT_GRANT_SERVICE_URL"] = nil
            (status, output) = try await AgentProcess.run(["run"], environment: environment)
            #expect(status == 1)
            #expect(output == "rescind-agent: RESCIND_AGENT_GRANT_SERVICE_URL: expected the grant service's http(s) URL\n")
        }
        try await TemporaryDirectory.with { directory in
            let keyFile = try directory.write("master.key", Data(SecureRandom.bytes(count: 32)))
            let configuration = try await Self.offlineConfiguration(directory, unlock: .keyFile(keyFile))
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: keyFile)
            let (status, output) = try await AgentProcess.run(
                ["run"], environment: AgentProcess.environment(configuration, unlock: ["RESCIND_AGENT_KEY_FILE": keyFile]))
            #expect(status == 1)
            #expect(output == "rescind-agent: key file \(keyFile) is open to other users (mode 0644): allow others nothing (chmod o-rwx; 0600, or 0440 for its group)\n")
        }
    }

    @Test("SIGKILL at any moment of a rotation and an erasure: the restarted agents converge, one ack each")
    func sigkill() async throws {
        let plaintexts = (1...40).map { "record \($0): unmistakable-plaintext-\($0)" }
        try await RevocationScenario.with(records: plaintexts) { service, s in
            let (member, kept, revoked) = (s.member, s.kept, s.revoked)

            // Killed once each: the rotating device as soon as its command is in the inbox,
            // the erasing device as soon as its erasure is logged (ack possibly unpublished).
            let keptProcess = try AgentProcess(["run"], environment: AgentProcess.environment(kept.configuration))
            let revokedProcess = try AgentProcess(["run"], environment: AgentProcess.environment(revoked.configuration))
            try await keptProcess.waitFor("partitions assigned")
            try await revokedProcess.waitFor("partitions assigned")
            try await s.revoke()
            try await keptProcess.waitFor("command received")
            keptProcess.signal(SIGKILL)
            try await revokedProcess.waitFor("cryptographically erased")
            revokedProcess.signal(SIGKILL)
            #expect(try await keptProcess.exitStatus() != 0)
            #expect(try await revokedProcess.exitStatus() != 0)

            // Restarted, then stopped gracefully with SIGTERM once converged.
            for device in [kept, revoked] {
                let process = try AgentProcess(["run"], environment: AgentProcess.environment(device.configuration))
                try await process.waitFor("partitions assigned")
                try await AgentTestKit.eventually("converged after SIGKILL") {
                    let status = try await AgentStatus.read(configuration: device.configuration)
                    return status.pendingCommands == 0 && status.owedAcks == 0 && status.sentAcks >= 1
                }
                try await Task.sleep(for: .seconds(1))
                process.signal(SIGTERM)
                #expect(try await process.exitStatus() == 0)
                #expect(process.text.contains("device agent stopped"))
            }

            let keptStatus = try await AgentStatus.read(configuration: kept.configuration)
            #expect(keptStatus.familyMembers.map(\.fmkVersion) == [2])
            let revokedStatus = try await AgentStatus.read(configuration: revoked.configuration)
            #expect(revokedStatus.familyMembers.map(\.status) == ["revoked"])
            for device in [kept, revoked] {
                // One ack per device. A kill after the broker stored the ack but before the agent
                // marked it sent re-publishes that same signed ack at restart (at least once; the
                // audit service dedupes by ack id): on a broker as fast as Tansu this happens.
                let acks = try await AgentTestKit.acks(service, from: device)
                #expect(!acks.isEmpty && Set(acks.map(\.ackID)).count == 1, "exactly one ack from \(device.deviceID): \(acks)")
                #expect(acks.allSatisfy { $0 == acks[0] }, "a re-sent ack is the same ack: \(acks)")
                #expect(acks.first?.outcome == .applied)
            }
            let agent = try await kept.open()
            #expect(try await agent.plaintexts(of: member.id) == member.records)

            // `status` prints holdings and never a key.
            let (code, printed) = try await AgentProcess.run(["status"], environment: AgentProcess.environment(revoked.configuration))
            #expect(code == 0)
            #expect(printed.contains("\(member.id.uuidString.lowercased())  revoked  FMK v0  (floor v2)  40 record(s)"))
            #expect(printed.contains("last command: secure_deletion"))
        }
    }
}
