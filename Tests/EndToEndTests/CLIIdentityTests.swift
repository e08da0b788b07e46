import Foundation
import RescindClient
import RescindPostgres
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
                #expect(shown.contains("key backup        current"), "\(shown)")  // identity create escrows the keys

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

                // A grant service that is not there: said at once, not after the request's 30 s deadline.
                let clock = ContinuousClock()
                let asked = clock.now
                try await RescindProcess.run(
                    ["identity", "show", "--profile", adultA.directory.path, "--grant-service", "https://127.0.0.1:1"],
                    environment: adultA.environment
                ).expectOneLineError("cannot reach https://127.0.0.1:1", "connection refused")
                #expect(clock.now - asked < .seconds(10), "connection refused took \(clock.now - asked)")
                // Plain HTTP: refused, to loopback too unless explicitly allowed, and never to another host.
                try await RescindProcess.run(
                    ["identity", "show", "--profile", adultA.directory.path, "--grant-service", "http://127.0.0.1:1"],
                    environment: adultA.environment
                ).expectOneLineError("refusing plain HTTP to http://127.0.0.1:1", "RESCIND_ALLOW_PLAIN_HTTP=loopback")
                // Allowed, it is tried (and fails at once here: the port speaks only TLS).
                let plainToTLS = "http://127.0.0.1:\(bed.grant.baseURL.port!)"
                try await RescindProcess.run(
                    ["identity", "show", "--profile", adultA.directory.path, "--grant-service", plainToTLS],
                    environment: adultA.environment.merging(["RESCIND_ALLOW_PLAIN_HTTP": "loopback"]) { $1 }
                ).expectOneLineError("cannot reach \(plainToTLS)")
                try await RescindProcess.run(
                    ["identity", "show", "--profile", adultA.directory.path, "--grant-service", "http://grant.example:8080"],
                    environment: adultA.environment.merging(["RESCIND_ALLOW_PLAIN_HTTP": "loopback"]) { $1 }
                ).expectOneLineError("refusing plain HTTP to http://grant.example:8080", "use https://")
                try await RescindProcess.run(
                    ["identity", "show", "--profile", adultA.directory.path, "--grant-service", "ftp://example"],
                    environment: adultA.environment
                ).expectOneLineError("--grant-service must be an http(s) URL")
            }
        }

        /// `identity code --with U` shows the same code on both sides (each side's private key
        /// with the other's public key), and another pair's code differs.
        @Test(.timeLimit(.minutes(3)))
        func bothSidesShowTheSameVerificationCode() async throws {
            try await CLITestBed.with { bed in
                let adultA = try await bed.person("Adult A")
                let adultB = try await bed.person("Adult B")
                let adultC = try await bed.person("Adult C")
                func code(_ profile: CLIProfile, with other: CLIProfile) async throws -> String {
                    let output = try await profile.ok(["identity", "code", "--with", other.userID])
                    return try #require(
                        output.firstMatch(of: /verification code ([0-9A-F]{2}-[0-9A-F]{2}-[0-9A-F]{2})/).map { String($0.output.1) },
                        "\(output)")
                }
                let fromA = try await code(adultA, with: adultB)
                let fromB = try await code(adultB, with: adultA)
                #expect(fromA == fromB)
                let aWithC = try await code(adultA, with: adultC)
                let cWithA = try await code(adultC, with: adultA)
                #expect(aWithC == cWithA)
                #expect(aWithC != fromA)
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
                // The recovery key, shown once: its words give the key the service registered.
                #expect(created.stdout.contains("recovery key: write these 34 words on paper now"), "\(created)")
                let words = Self.recoveryWords(in: created.stdout)
                let recovery = try RecoveryKey(words: words.joined(separator: " "))
                let registered = try await bed.grant.withConnection { connection in
                    try await connection.query("SELECT recovery_public_key FROM users WHERE user_id = \(UUID(uuidString: userID)!)")
                        .first?.decode(Data.self, column: 0)
                }
                #expect(registered == recovery.publicKey)
                #expect(!(try String(contentsOfFile: directory + "/keystore.json", encoding: .utf8)).contains(words[0] + " " + words[1]))

                let shown = try await RescindProcess.run(["identity", "show"] + options, environment: passphrase)
                #expect(shown.status == 0 && CLITestBed.value(after: "user", in: shown.stdout) == userID, "\(shown)")
                try await RescindProcess.run(["identity", "show"] + options, environment: ["RESCIND_PASSPHRASE": "wrong"])
                    .expectOneLineError("wrong passphrase")
            }
        }

        /// The recovery words printed at `identity create` retire the profile's device at once (as
        /// an owner does to a stolen phone) and restore it, with no device or profile of their own;
        /// words with one wrong word do nothing.
        @Test(.timeLimit(.minutes(3)))
        func theRecoveryWordsRetireAndRestoreADevice() async throws {
            try await CLITestBed.with { bed in
                let directory = bed.root.appendingPathComponent("profiles/recovering").path
                let options = ["--profile", directory, "--grant-service", bed.grant.baseURL.absoluteString]
                let passphrase = ["RESCIND_PASSPHRASE": "correct horse battery staple"]
                let created = try await RescindProcess.run(["identity", "create", "--name", "Adult A"] + options, environment: passphrase)
                #expect(created.status == 0, "\(created)")
                let userID = try #require(CLITestBed.value(after: "user", in: created.stdout))
                let deviceID = try #require(CLITestBed.value(after: "device", in: created.stdout))
                let words = Self.recoveryWords(in: created.stdout)
                #expect(words.count == 34)
                let wordsFile = bed.root.appendingPathComponent("recovery-words.txt")
                let recover = ["identity", "recover", "--user", userID, "--words-file", wordsFile.path, "--grant-service", bed.grant.baseURL.absoluteString]

                var wrong = words
                wrong[3] = wrong[3] == "able" ? "acid" : "able"
                try wrong.joined(separator: " ").write(to: wordsFile, atomically: true, encoding: .utf8)
                let refused = try await RescindProcess.run(recover + ["--retire", deviceID], environment: [:])
                #expect(refused.status != 0 && refused.stderr.contains("do not check out"), "\(refused)")

                try words.joined(separator: " ").write(to: wordsFile, atomically: true, encoding: .utf8)
                let retired = try await RescindProcess.run(recover + ["--retire", deviceID], environment: [:])
                #expect(retired.status == 0 && retired.stdout.contains("retired device \(deviceID)"), "\(retired)")
                let shutOut = try await RescindProcess.run(["identity", "show"] + options, environment: passphrase)
                #expect(shutOut.status != 0 && shutOut.stderr.contains("device_retired"), "\(shutOut)")
                let restored = try await RescindProcess.run(recover + ["--restore", deviceID], environment: [:])
                #expect(restored.status == 0 && restored.stdout.contains("restored device \(deviceID)"), "\(restored)")
                let shown = try await RescindProcess.run(["identity", "show"] + options, environment: passphrase)
                #expect(shown.status == 0 && CLITestBed.value(after: "user", in: shown.stdout) == userID, "\(shown)")
            }
        }

        /// The stolen-phone sequence from the CLI: B rotates their identity; A revokes B everywhere
        /// and re-grants; B reads everything with the new keys, and a copy of B's old profile
        /// (what the thief took) opens nothing issued after the rotation.
        @Test(.timeLimit(.minutes(3)))
        func rotateAfterATheftThenChangeThePassphrase() async throws {
            try await CLITestBed.with { bed in
                let adultA = try await bed.person("Adult A")
                let adultB = try await bed.person("Adult B")
                let emma = try await adultA.ok(["family-member", "create"]).trimmed
                try await adultA.ok(["record", "add", emma, "--text", "MMR vaccination, dose 1"])
                try await adultA.ok(["grant", emma, "--to", adultB.userID])
                // The thief's copy of B's profile, taken before B reacts.
                let stolen = bed.root.appendingPathComponent("profiles/stolen")
                try FileManager.default.copyItem(at: adultB.directory, to: stolen)
                let thief = CLIProfile(
                    name: "thief", directory: stolen, keyFile: adultB.keyFile, grantService: adultB.grantService,
                    auditService: nil, userID: adultB.userID, deviceID: adultB.deviceID)

                let rotated = try await adultB.ok(["identity", "rotate", "--words-file", try #require(adultB.recoveryWords).path])
                #expect(rotated.contains("identity rotated: generation 2"), "\(rotated)")
                #expect(rotated.contains("keys moved        1"), "\(rotated)")
                #expect(try await adultB.ok(["identity", "show"]).contains("generation        2"))
                #expect(try await adultB.ok(["record", "show", emma, "--all"]).contains("MMR vaccination"))

                try await adultA.ok(["revoke", "--everywhere", "--user", adultB.userID, "--reason", "phone stolen", "--yes"])
                try await adultA.ok(["record", "add", emma, "--text", "written after the theft"])
                // B's new keys follow from the pinned ones by a rotation signed with the old key, which
                // the thief holds too: A re-grants only after comparing codes with B.
                let refused = try await adultA.run(["grant", emma, "--to", adultB.userID])
                #expect(refused.status != 0 && refused.stderr.contains("unverified_recipient_key"), "\(refused)")
                // "verification code A3-5F-2B (your keys with …)"
                let code = { (printed: String) in String(printed.split(separator: " ").dropFirst(2).first ?? "") }
                let codeOnA = code(try await adultA.ok(["identity", "code", "--with", adultB.userID]))
                let codeOnB = code(try await adultB.ok(["identity", "code", "--with", adultA.userID]))
                #expect(codeOnA == codeOnB && codeOnA.count == 8)
                try await adultA.ok(["identity", "trust", adultB.userID, "--code", codeOnB])
                try await adultA.ok(["grant", emma, "--to", adultB.userID])
                let shown = try await adultB.ok(["record", "show", emma, "--all"])
                #expect(shown.contains("written after the theft") && shown.contains("MMR vaccination"), "\(shown)")
                // The stolen profile still authenticates as the phone (not retired here), but its keys open nothing.
                let attempt = try await thief.run(["record", "show", emma, "--all"])
                #expect(attempt.status != 0 && !attempt.stdout.contains("written after the theft"), "\(attempt)")

                // A new passphrase (here a new key file) re-protects B's keys; the old one stops working.
                let newKeyFile = bed.root.appendingPathComponent("keys/adult-b-new.key")
                try CLIProfile.makeKeyFile(at: newKeyFile)
                let changed = try await RescindProcess.run(
                    ["identity", "passphrase", "--profile", adultB.directory.path, "--grant-service", adultB.grantService.absoluteString],
                    environment: adultB.environment.merging(["RESCIND_NEW_KEY_FILE": newKeyFile.path]) { $1 })
                #expect(changed.status == 0 && changed.stdout.contains("re-protected"), "\(changed)")
                try await adultB.run(["identity", "show"]).expectOneLineError("wrong passphrase")
                let reopened = try await RescindProcess.run(
                    ["record", "show", emma, "--all", "--profile", adultB.directory.path, "--grant-service", adultB.grantService.absoluteString],
                    environment: ["RESCIND_KEY_FILE": newKeyFile.path])
                #expect(reopened.status == 0 && reopened.stdout.contains("written after the theft"), "\(reopened)")
            }
        }
    }
}

extension CLITests.Identity {
    /// The recovery words `identity create` printed: the numbered rows, numbers dropped.
    static func recoveryWords(in stdout: String) -> [String] {
        stdout.split(separator: "\n").filter { $0.range(of: #"^\s+\d+ [a-z]+"#, options: .regularExpression) != nil }
            .flatMap { $0.split(separator: " ").filter { Int($0) == nil } }.map(String.init)
    }
}
