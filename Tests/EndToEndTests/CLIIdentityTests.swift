import Foundation
import Testing

extension CLITests {
    @Suite("rescind identity") struct Identity {
        @Test(.timeLimit(.minutes(3)))
        func createThenShowAndTheRefusals() async throws {
            try await CLITestBed.with { bed in
                let adultA = try await bed.person("Adult A")
                let shown = try await adultA.ok(["identity", "show"])
                #expect(CLITestBed.value(after: "user", in: shown) == adultA.userID)
                #expect(shown.contains("agreement key") && shown.contains("identity key"), "\(shown)")

                // An enrolled profile is never overwritten.
                try await adultA.run(["identity", "create", "--name", "Someone else"])
                    .expectOneLineError("already enrolled")
                #expect(try await adultA.ok(["identity", "show"]) == shown)

                try await bed.profile("Nameless").run(["identity", "create"]).expectUsageError("--name")
                try await bed.profile("Never created").run(["identity", "show"])
                    .expectOneLineError("no keystore", "rescind identity create")

                // No passphrase, passphrase file or key file, and no terminal to ask on.
                try await RescindProcess.run([
                    "identity", "show", "--profile", adultA.directory.path, "--grant-service", bed.grant.baseURL.absoluteString,
                ]).expectOneLineError("RESCIND_PASSPHRASE")

                // A grant service that is not there.
                try await RescindProcess.run(
                    ["identity", "show", "--profile", adultA.directory.path, "--grant-service", "http://127.0.0.1:1"],
                    environment: adultA.environment
                ).expectOneLineError("cannot reach http://127.0.0.1:1")
                try await RescindProcess.run(
                    ["identity", "show", "--profile", adultA.directory.path, "--grant-service", "ftp://example"],
                    environment: adultA.environment
                ).expectOneLineError("--grant-service must be an http(s) URL")
            }
        }

        @Test(.timeLimit(.minutes(3)))
        func aPassphraseProtectedProfile() async throws {
            try await CLITestBed.with { bed in
                let directory = bed.root.appendingPathComponent("profiles/passphrase").path
                let options = ["--profile", directory, "--grant-service", bed.grant.baseURL.absoluteString]
                let passphrase = ["RESCIND_PASSPHRASE": "correct horse battery staple"]
                let created = try await RescindProcess.run(["identity", "create", "--name", "Adult B"] + options, environment: passphrase)
                #expect(created.status == 0, "\(created)")
                let userID = try #require(CLITestBed.value(after: "user", in: created.stdout))

                let shown = try await RescindProcess.run(["identity", "show"] + options, environment: passphrase)
                #expect(shown.status == 0 && CLITestBed.value(after: "user", in: shown.stdout) == userID, "\(shown)")
                try await RescindProcess.run(["identity", "show"] + options, environment: ["RESCIND_PASSPHRASE": "wrong"])
                    .expectOneLineError("wrong passphrase")
            }
        }
    }
}
