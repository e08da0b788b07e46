import Foundation
import RescindTestSupport
import Testing

extension CLITests {
    /// `rescind` for scripts: every command that lists or shows prints one JSON document with
    /// `--json`, and the exit status says why a command failed.
    @Suite("rescind for scripts: --json and exit statuses") struct Scripting {
        @Test(.timeLimit(.minutes(4)))
        func everyListingAndShowingCommandPrintsJSON() async throws {
            try await CLITestBed.with(audit: true) { bed in
                let adultA = try await bed.person("Adult A")
                let adultB = try await bed.person("Adult B")
                let emma = try await adultA.ok(["family-member", "create"]).trimmed
                let vaccination = try await adultA.ok(["record", "add", emma, "--text", "MMR vaccination, dose 1"]).trimmed
                try await adultA.ok(["record", "add", emma, "--text", "allergy: penicillin"])
                try await adultA.ok(["grant", emma, "--to", adultB.userID])

                let members = try await Self.json(adultA, ["family-member", "list"]) as? [[String: Any]]
                #expect(members?.count == 1 && Self.id(members?.first?["family_member_id"]) == emma, "\(String(describing: members))")
                #expect(Self.id(members?.first?["owner_user_id"]) == adultA.userID && members?.first?["current_fmk_version"] as? Int == 1)

                let records = try #require(try await Self.json(adultA, ["record", "list", emma]) as? [[String: Any]])
                #expect(records.count == 2 && records.allSatisfy { ($0["bytes"] as? Int ?? 0) > 0 && $0["fmk_version"] as? Int == 1 })
                #expect(records.allSatisfy { $0["text"] == nil && $0["ciphertext"] == nil }, "a list decrypts nothing")
                let opened = try #require(try await Self.json(adultB, ["record", "show", emma, "--all"]) as? [[String: Any]])
                #expect(Set(opened.compactMap { $0["text"] as? String }) == ["MMR vaccination, dose 1", "allergy: penicillin"])
                let one = try #require(try await Self.json(adultA, ["record", "show", emma, vaccination]) as? [[String: Any]])
                #expect(one.map { Self.id($0["record_id"]) } == [vaccination])
                let trash = try #require(try await Self.json(adultA, ["record", "trash", emma]) as? [String: Any])
                #expect((trash["versions"] as? [Any])?.isEmpty == true && trash["retention_days"] as? Int == 30, "\(trash)")

                let devices = try #require(try await Self.json(adultA, ["device", "list"]) as? [String: Any])
                #expect((devices["devices"] as? [[String: Any]])?.map { Self.id($0["device_id"]) } == [adultA.deviceID], "\(devices)")
                let identity = try #require(try await Self.json(adultA, ["identity", "show"]) as? [String: Any])
                #expect(Self.id(identity["user_id"]) == adultA.userID && Self.id(identity["device_id"]) == adultA.deviceID)
                #expect(identity["identity_generation"] as? Int == 1 && identity["key_backup"] as? String == "current", "\(identity)")
                #expect((identity["recovery_public_key"] as? String).flatMap { Data(base64Encoded: $0) }?.count == 32, "\(identity)")
                let code = try #require(try await Self.json(adultA, ["identity", "code", "--with", adultB.userID]) as? [String: Any])
                let theirs = try #require(try await Self.json(adultB, ["identity", "code", "--with", adultA.userID]) as? [String: Any])
                #expect(code["code"] as? String != nil && code["code"] as? String == theirs["code"] as? String, "\(code) \(theirs)")
                let pending = try #require(try await Self.json(adultA, ["identity", "pending"]) as? [String: Any])
                #expect((pending["operations"] as? [Any])?.isEmpty == true, "\(pending)")

                let revoked = try await adultA.ok(["revoke", emma, "--user", adultB.userID, "--yes"])
                let eventID = try #require(revoked.firstMatch(of: /\(event ([0-9a-f-]{36})\)/).map { String($0.output.1) }, "\(revoked)")
                let status = try await CLITestBed.eventually("the audit service's record of the revocation") { () -> [String: Any]? in
                    let output = try await adultA.run(["revocation", eventID, "--json"])
                    return output.status == 0 ? try JSONSerialization.jsonObject(with: Data(output.stdout.utf8)) as? [String: Any] : nil
                }
                #expect(Self.id(status["family_member_id"]) == emma && status["new_fmk_version"] as? Int == 2, "\(status)")

                let log = try await CLITestBed.eventually("the revocation in the access log") { () -> [String: Any]? in
                    let document = try await Self.json(adultA, ["access-log", emma, "--verify"]) as? [String: Any]
                    let entries = document?["entries"] as? [[String: Any]] ?? []
                    return entries.contains { $0["event_type"] as? String == "access_revoked" } ? document : nil
                }
                let verification = try #require(log["verification"] as? [String: Any], "\(log)")
                #expect((verification["report"] as? [String: Any])?["valid"] as? Bool == true, "\(verification)")
                let revocation = (log["entries"] as? [[String: Any]])?.first { $0["event_type"] as? String == "access_revoked" }
                #expect(Self.id(revocation?["target_user_id"]) == adultB.userID, "\(String(describing: revocation))")
                #expect(revocation?["details"] is [String: Any], "opened here: \(String(describing: revocation))")
            }
        }

        @Test(.timeLimit(.minutes(3)))
        func theExitStatusSaysWhyACommandFailed() async throws {
            try await CLITestBed.with(audit: true) { bed in
                let adultA = try await bed.person("Adult A")
                let adultC = try await bed.person("Adult C")
                let emma = try await adultA.ok(["family-member", "create"]).trimmed
                try await adultA.ok(["record", "add", emma, "--text", "allergy: penicillin"])
                try await adultA.ok(["grant", emma, "--to", adultC.userID])

                let help = try await RescindProcess.run(["--help"])
                #expect(help.status == 0 && help.stdout.contains("Exit status: 0 done; 1 failed here"), "\(help)")

                // 64: usage.
                try await adultA.run(["record", "show", emma]).expectUsageError("--all")
                // 3: the service refused (here, no such family member).
                let refused = try await adultA.run(["record", "list", UUID().uuidString])
                refused.expectOneLineError("404")
                #expect(refused.status == 3, "\(refused)")
                // 4: nothing answers.
                let unreachable = try await RescindProcess.run(
                    ["family-member", "list", "--profile", adultA.directory.path, "--grant-service", "https://127.0.0.1:9"],
                    environment: adultA.environment)
                unreachable.expectOneLineError("cannot reach")
                #expect(unreachable.status == 4, "\(unreachable)")
                // 1: a local failure (a key file that opens nothing).
                let wrongKey = bed.root.appendingPathComponent("keys/wrong.key")
                try CLIProfile.makeKeyFile(at: wrongKey)
                let locked = try await RescindProcess.run(
                    ["family-member", "list", "--profile", adultA.directory.path, "--grant-service", bed.grant.baseURL.absoluteString],
                    environment: ["RESCIND_KEY_FILE": wrongKey.path])
                #expect(locked.status == 1, "\(locked)")
                // 2: a key history this client refuses. A compromised service rewrites a byte of the
                // signature of Emma's first statement; Adult C, who has verified none of it yet,
                // refuses the history and uses nothing.
                try await bed.grant.withConnection {
                    try await $0.execute(
                        "UPDATE key_statements SET signature = set_byte(signature, 5, get_byte(signature, 5) # 1) WHERE seq = 1")
                }
                let forged = try await adultC.run(["record", "show", emma, "--all"])
                forged.expectOneLineError()
                #expect(forged.status == 2 && !forged.stdout.contains("penicillin"), "\(forged)")
            }
        }

        /// An id as the JSON holds it (the API's UUID form), as the text output prints it.
        static func id(_ value: Any?) -> String? {
            (value as? String)?.lowercased()
        }

        /// Runs `arguments --json`, which must succeed and print one JSON document on one line.
        static func json(_ profile: CLIProfile, _ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) async throws -> Any {
            let output = try await profile.ok(arguments + ["--json"], sourceLocation: sourceLocation)
            #expect(output.split(separator: "\n").count == 1, "one line: \(output)", sourceLocation: sourceLocation)
            return try JSONSerialization.jsonObject(with: Data(output.utf8))
        }
    }
}
