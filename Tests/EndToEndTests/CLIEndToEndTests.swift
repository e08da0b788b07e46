import Foundation
import RescindDevKit
import RescindTestSupport
import Testing

/// The `rescind` binary as two people would use it, against a real grant service.
@Suite struct CLIEndToEndTests {
    struct Profile {
        let directory: URL
        let baseURL: URL

        func run(_ arguments: [String], passphrase: String = "correct horse battery staple") async throws -> (status: Int32, output: String) {
            let result = try await ChildProcess.run(
                DemoEndToEndTests.binaries.appendingPathComponent("rescind"),
                arguments + ["--profile", directory.path, "--grant-service", baseURL.absoluteString],
                environment: [
                    "RESCIND_PASSPHRASE": passphrase, "PATH": "/usr/bin:/bin",
                    "RESCIND_CA_FILE": try await TestTLS.shared().caFile,
                ], timeout: .seconds(90))
            #expect(!result.timedOut, "rescind \(arguments.joined(separator: " ")) still running after 90 s: \(result.output)")
            return (result.status, result.output)
        }

        /// Runs a command that must succeed; returns its output.
        func ok(_ arguments: [String]) async throws -> String {
            let (status, output) = try await run(arguments)
            #expect(status == 0, "rescind \(arguments.joined(separator: " ")) failed: \(output)")
            return output
        }
    }

    @Test(.timeLimit(.minutes(3)))
    func twoPeopleShareThenOneRevokes() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: DemoEndToEndTests.binaries.appendingPathComponent("rescind").path))
        try await GrantServiceHarness.with { service in
            let root = FileManager.default.temporaryDirectory.appendingPathComponent("rescind-cli-\(UUID().uuidString.prefix(8))")
            defer { try? FileManager.default.removeItem(at: root) }
            let adultA = Profile(directory: root.appendingPathComponent("a"), baseURL: service.baseURL)
            let adultB = Profile(directory: root.appendingPathComponent("b"), baseURL: service.baseURL)

            _ = try await adultA.ok(["identity", "create", "--name", "Adult A"])
            let bIdentity = try await adultB.ok(["identity", "create", "--name", "Adult B"])
            let bUser = try #require(bIdentity.split(separator: "\n").first?.split(separator: " ").last.map(String.init))
            let emma = try await adultA.ok(["family-member", "create"]).trimmingCharacters(in: .whitespacesAndNewlines)
            _ = try await adultA.ok(["record", "add", emma, "--text", "2025-01-05 MMR vaccination, dose 1"])
            _ = try await adultA.ok(["record", "add", emma, "--text", "penicillin allergy"])

            let granted = try await adultA.ok(["grant", emma, "--to", bUser])
            #expect(granted.range(of: #"verification code [0-9A-F]{2}-[0-9A-F]{2}-[0-9A-F]{2}"#, options: .regularExpression) != nil)
            let shared = try await adultB.ok(["record", "show", emma, "--all"])
            #expect(shared.contains("MMR vaccination") && shared.contains("penicillin allergy"))

            let revoked = try await adultA.ok(["revoke", emma, "--user", bUser, "--reason", "custody change", "--yes"])
            #expect(revoked.contains("FMK v2, 2 records re-encrypted"))
            #expect(revoked.contains("re-encrypting") && revoked.contains("committed"), "no progress shown: \(revoked)")
            #expect(try await adultA.ok(["record", "show", emma, "--all"]).contains("penicillin allergy"))

            // The revoked user gets one clear line and a non-zero exit, never a stack trace.
            let (status, output) = try await adultB.run(["record", "show", emma, "--all"])
            #expect(status != 0)
            #expect(output.contains("403") && output.contains("access_revoked"))
            #expect(output.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "\n").count == 1, "\(output)")

            // A wrong passphrase is refused with one line too.
            let (wrongStatus, refusal) = try await adultA.run(["family-member", "list"], passphrase: "wrong")
            #expect(wrongStatus != 0)
            #expect(refusal.lowercased().contains("passphrase"), "\(refusal)")
        }
    }
}
