import Foundation
import Testing

extension CLITests {
    /// The seeds' stolen-device scenario, end to end with the real `rescind` binary: the owner's
    /// one resumable command, the victim's retire and rotation, the code comparison, and a
    /// thief with a copy of the phone's profile who gets nothing issued afterwards.
    @Suite("rescind revoke --everywhere --stolen") struct StolenDevice {
        @Test(.timeLimit(.minutes(4)))
        func revokeWaitForTheRotationCompareCodesAndReGrant() async throws {
            try #require(FileManager.default.isExecutableFile(atPath: RescindProcess.agentBinary.path))
            try await CLITestBed.with { bed in
                let adultA = try await bed.person("Adult A")
                let phone = try await bed.person("Adult B")
                let laptop = try await Devices.secondDevice(of: phone, name: "Adult B's laptop", bed: bed)
                let thief = try Devices.copy(of: phone, to: "phone", bed: bed)
                var members: [String] = []
                for name in ["Emma", "Liam"] {
                    let member = try await adultA.ok(["family-member", "create"]).trimmed
                    try await adultA.ok(["record", "add", member, "--text", "\(name): before the theft"])
                    try await adultA.ok(["grant", member, "--to", phone.userID])
                    members.append(member)
                }
                let stolenCommand = ["revoke", "--everywhere", "--stolen", "--user", phone.userID, "--reason", "phone stolen", "--yes"]
                try await adultA.run(["revoke", "--everywhere", "--user", phone.userID, "--code", "00-00-00"]).expectUsageError("--code")

                // 1. A revokes B everywhere; the re-grant waits for B's new keys.
                let first = try await adultA.ok(stolenCommand)
                for member in members { #expect(first.contains("revoked from \(member): FMK v2, 1 records re-encrypted"), "\(first)") }
                #expect(first.contains("waiting: their identity keys are still generation 1"), "\(first)")
                #expect(first.contains("left: 0 to revoke, 2 to re-grant"), "\(first)")
                // Run again before B acted: nothing revoked twice, still waiting.
                let again = try await adultA.ok(stolenCommand)
                #expect(again.contains("resuming") && !again.contains("revoked from"), "\(again)")

                // 2. B retires the phone and rotates from the laptop, with the recovery words.
                try await laptop.ok(["device", "retire", phone.deviceID])
                let words = try #require(phone.recoveryWords).path
                #expect(try await laptop.ok(["identity", "rotate", "--words-file", words]).contains("generation 2"))

                // 3. A is asked to compare codes; B's laptop shows the same code; A confirms.
                let third = try await adultA.ok(stolenCommand)
                let code = try #require(
                    third.range(of: #"if it shows ([0-9A-F]{2}(-[0-9A-F]{2})+)"#, options: .regularExpression)
                        .map { String(third[$0].dropFirst("if it shows ".count)) }, "\(third)")
                #expect(try await laptop.ok(["identity", "code", "--with", adultA.userID]).contains("verification code \(code)"))
                try await adultA.run(stolenCommand + ["--code", "00-00-00"]).expectNoReGrant()
                let done = try await adultA.ok(stolenCommand + ["--code", code])
                #expect(done.contains("done: revoked 2/2, re-granted 2/2"), "\(done)")
                for member in members { #expect(done.contains("re-granted \(member) at FMK v2 to their new keys"), "\(done)") }
                #expect(!done.contains("left:"), "\(done)")

                // 4. A writes after the theft; B reads it on the laptop; the thief's copy gets nothing.
                try await adultA.ok(["record", "add", members[0], "--text", "Emma: after the theft"])
                let read = try await laptop.ok(["record", "show", members[0], "--all"])
                #expect(read.contains("after the theft") && read.contains("before the theft"), "\(read)")
                let attempt = try await thief.run(["record", "show", members[0], "--all"])
                #expect(attempt.status != 0 && !attempt.stdout.contains("after the theft"), "\(attempt)")
            }
        }
    }
}

extension CLITests.StolenDevice {
    /// The agent's password change (key-hierarchy ADR, scenario A) as a process: the old key
    /// file stops opening the keystore, the new one opens the same identity.
    @Test(.timeLimit(.minutes(2)))
    func anAgentChangesItsPassphrase() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: RescindProcess.agentBinary.path))
        try await CLITestBed.with { bed in
            let phone = try await bed.person("Adult B")
            let newKeyFile = bed.root.appendingPathComponent("keys/adult-b-agent-new.key")
            try CLIProfile.makeKeyFile(at: newKeyFile)
            func agent(_ arguments: [String], keyFile: URL, extra: [String: String] = [:]) async throws -> RescindProcess.Output {
                try await RescindProcess.run(
                    arguments,
                    environment: [
                        "RESCIND_AGENT_DATA_DIR": phone.directory.path, "RESCIND_AGENT_KEY_FILE": keyFile.path,
                        "RESCIND_AGENT_GRANT_SERVICE_URL": bed.grant.baseURL.absoluteString,
                        "RESCIND_AGENT_GRANT_SERVICE_KEY": Data(bed.grant.serviceKey.rawRepresentation).base64EncodedString(),
                        "RESCIND_KAFKA_BOOTSTRAP_SERVERS": "127.0.0.1:9092",
                    ].merging(extra) { $1 },
                    executable: RescindProcess.agentBinary)
            }
            let refused = try await agent(["change-passphrase"], keyFile: phone.keyFile)
            #expect(refused.status != 0 && refused.stderr.contains("RESCIND_AGENT_NEW_PASSPHRASE"), "\(refused)")
            let changed = try await agent(["change-passphrase"], keyFile: phone.keyFile, extra: ["RESCIND_AGENT_NEW_KEY_FILE": newKeyFile.path])
            #expect(changed.status == 0, "\(changed)")
            let old = try await agent(["sync"], keyFile: phone.keyFile)
            #expect(old.status != 0 && old.stderr.contains("wrong passphrase"), "\(old)")
            let new = try await RescindProcess.run(
                ["identity", "show", "--profile", phone.directory.path, "--grant-service", phone.grantService.absoluteString],
                environment: ["RESCIND_KEY_FILE": newKeyFile.path])
            #expect(new.status == 0 && CLITestBed.value(after: "user", in: new.stdout) == phone.userID, "\(new)")
        }
    }
}

extension RescindProcess.Output {
    /// A `revoke --stolen` run that refused to re-grant (a code that does not match).
    func expectNoReGrant(sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(status == 0 && stdout.contains("re-granted 0/") && stdout.contains("do not re-grant"), "\(self)", sourceLocation: sourceLocation)
    }
}
