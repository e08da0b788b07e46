import Foundation
import RescindCrypto
import RescindPostgres
import Testing

extension CLITests {
    @Suite("rescind grant and revoke") struct GrantRevoke {
        @Test(.timeLimit(.minutes(3)))
        func grantRevokeAndRegrantTheCurrentVersionOnly() async throws {
            try await CLITestBed.with { bed in
                let adultA = try await bed.person("Adult A")
                let adultC = try await bed.person("Adult C")
                let emma = try await adultA.ok(["family-member", "create"]).trimmed
                for text in ["MMR vaccination, dose 1", "penicillin allergy", "2025-02-11 ear infection"] {
                    try await adultA.ok(["record", "add", emma, "--text", text])
                }

                try await adultA.run(["grant", emma, "--to", UUID().uuidString]).expectOneLineError("404")
                try await adultA.run(["grant", emma]).expectUsageError("--to")
                let granted = try await adultA.ok(["grant", emma, "--to", adultC.userID])
                #expect(
                    granted.trimmed.range(of: #"^granted; verification code [0-9A-F]{2}(-[0-9A-F]{2})+$"#, options: .regularExpression) != nil,
                    "\(granted)")
                #expect(try await adultC.ok(["record", "show", emma, "--all"]).contains("penicillin allergy"))
                // Only the owner revokes.
                try await adultC.run(["revoke", emma, "--user", adultA.userID, "--yes"]).expectOneLineError("403")

                let revoked = try await adultA.run(["revoke", emma, "--user", adultC.userID, "--reason", "custody change", "--batch-size", "2", "--yes"])
                #expect(revoked.status == 0, "\(revoked)")
                #expect(revoked.stdout.contains("revoked from \(emma): FMK v2, 3 records re-encrypted"), "\(revoked)")
                // Progress goes to standard error: one line per phase when it is not a terminal.
                #expect(revoked.stderr.contains("re-encrypting") && revoked.stderr.contains("3/3"), "\(revoked)")
                #expect(revoked.stderr.contains("committed"), "\(revoked)")
                try await adultC.run(["record", "show", emma, "--all"]).expectOneLineError("403", "access_revoked")
                try await adultC.run(["record", "list", emma]).expectOneLineError("403")

                // Re-granted, C gets the current FMK: every record is at v2 and opens.
                try await adultA.ok(["record", "add", emma, "--text", "2025-04-01 after the revocation"])
                let regranted = try await adultA.ok(["grant", emma, "--to", adultC.userID])
                #expect(regranted.contains("verification code"))
                let listed = try await adultC.ok(["record", "list", emma]).split(separator: "\n")
                #expect(listed.count == 4 && listed.allSatisfy { $0.contains("  v2  ") }, "\(listed)")
                let shown = try await adultC.ok(["record", "show", emma, "--all"])
                #expect(shown.contains("MMR vaccination") && shown.contains("after the revocation"), "\(shown)")
                #expect(try await adultC.ok(["family-member", "list"]).trimmed == "\(emma)  FMK v2  shared with you")
            }
        }

        /// A compromised grant service swaps B's X25519 key in its database before A revokes C, so
        /// that the new FMK would be wrapped to a key it holds. A's client wraps only to keys it
        /// verified: the revocation is refused in one line and reported, nothing is committed, and
        /// the attacker's key opens no wrapped key the service stores.
        @Test(.timeLimit(.minutes(3)))
        func aRevocationIsRefusedWhenTheServiceSwapsARemainingGranteesKey() async throws {
            try await CLITestBed.with(audit: true) { bed in
                let adultA = try await bed.person("Adult A")
                let adultB = try await bed.person("Adult B")
                let adultC = try await bed.person("Adult C")
                let emma = try await adultA.ok(["family-member", "create"]).trimmed
                for text in ["MMR vaccination, dose 1", "penicillin allergy", "2025-02-11 ear infection"] {
                    try await adultA.ok(["record", "add", emma, "--text", text])
                }
                try await adultA.ok(["grant", emma, "--to", adultB.userID])
                try await adultA.ok(["grant", emma, "--to", adultC.userID])

                let attacker = X25519.PrivateKey()
                try await bed.grant.withConnection { connection in
                    try await connection.execute(
                        """
                        UPDATE users SET agreement_public_key = \(Data(attacker.publicKey.rawRepresentation))
                        WHERE user_id = \(UUID(uuidString: adultB.userID)!)
                        """)
                }
                // The preview prints first; the refusal is the last line.
                let refused = try await adultA.run(["revoke", emma, "--user", adultC.userID, "--yes"])
                let last = refused.stderr.split(separator: "\n").last.map(String.init) ?? ""
                #expect(refused.status != 0 && last.hasPrefix("Error: "), "\(refused)")
                for fragment in ["unverified_recipient_key", adultB.userID, "nothing was wrapped"] {
                    #expect(last.contains(fragment), "missing \(fragment): \(refused)")
                }
                let rows = try await bed.grant.withConnection { connection in
                    try await connection.query(
                        """
                        SELECT wrapped_fmk, granter_agreement_public_key, fmk_version FROM access_grants
                        WHERE family_member_id = \(UUID(uuidString: emma)!) AND wrapping = 'ecdh' AND wrapped_fmk IS NOT NULL
                        """
                    ).map { try $0.decode(Data.self, Data.self, Int.self) }
                }
                #expect(rows.count == 2 && rows.allSatisfy { $0.2 == 1 })
                for (wrapped, granter, version) in rows {
                    #expect(throws: (any Error).self) {
                        try FMKWrapping.unwrap(
                            [UInt8](wrapped), familyMemberID: UUID(uuidString: emma)!, version: UInt32(version),
                            grantee: attacker, granter: try X25519.PublicKey(rawRepresentation: [UInt8](granter)))
                    }
                }
                // C still reads: the revocation was abandoned, not committed.
                #expect(try await adultC.ok(["record", "show", emma, "--all"]).contains("penicillin allergy"))
            }
        }

        @Test(.timeLimit(.minutes(3)))
        func revokeEverywhereAcrossTwoFamilyMembers() async throws {
            try await CLITestBed.with { bed in
                let adultA = try await bed.person("Adult A")
                let adultB = try await bed.person("Adult B")
                var members: [String] = []
                for name in ["Emma", "Liam"] {
                    let member = try await adultA.ok(["family-member", "create"]).trimmed
                    try await adultA.ok(["record", "add", member, "--text", "\(name): growth chart"])
                    try await adultA.ok(["grant", member, "--to", adultB.userID])
                    members.append(member)
                }
                // A family member of someone else's is not touched.
                let adultD = try await bed.person("Adult D")
                let noah = try await adultD.ok(["family-member", "create"]).trimmed
                try await adultD.ok(["grant", noah, "--to", adultB.userID])

                try await adultA.run(["revoke", "--user", adultB.userID]).expectUsageError("--everywhere")
                try await adultA.run(["revoke", members[0], "--everywhere", "--user", adultB.userID]).expectUsageError("--everywhere")
                try await adultA.run(["revoke", members[0]]).expectUsageError("--user")

                // Without a terminal, --yes is required, and nothing is read or changed without it.
                try await adultA.run(["revoke", "--everywhere", "--user", adultB.userID]).expectOneLineError("--yes")
                let revoked = try await adultA.run(["revoke", "--everywhere", "--user", adultB.userID, "--reason", "device stolen", "--yes"])
                #expect(revoked.status == 0, "\(revoked)")
                #expect(
                    revoked.stdout.contains(
                        "Adult B (user \(adultB.userID.lowercased())) will lose access to 2 family member(s); 2 record(s) will be re-encrypted"),
                    "the preview covers both family members, and not D's: \(revoked)")
                for member in members {
                    #expect(revoked.stdout.contains("revoked from \(member): FMK v2, 1 records re-encrypted"), "\(revoked)")
                    try await adultB.run(["record", "show", member, "--all"]).expectOneLineError("403", "access_revoked")
                }
                #expect(revoked.stderr.contains("committed"), "no progress shown: \(revoked)")
                #expect(try await adultB.ok(["family-member", "list"]).trimmed == "\(noah)  FMK v1  shared with you")
            }
        }

        /// Revoking asks first. Without a terminal and without --yes: one line naming --yes, and
        /// nothing changes. With --yes: who loses access, the records, the devices told to erase
        /// (the agents, never the CLI profiles), what revocation cannot do — then the commit.
        @Test(.timeLimit(.minutes(3)))
        func revokingShowsWhatHappensAndAsksFirst() async throws {
            try await CLITestBed.with { bed in
                let adultA = try await bed.person("Adult A")
                let adultC = try await bed.person("Adult C")
                let emma = try await adultA.ok(["family-member", "create"]).trimmed
                for text in ["penicillin allergy", "MMR vaccination, dose 1"] {
                    try await adultA.ok(["record", "add", emma, "--text", text])
                }
                try await adultA.ok(["grant", emma, "--to", adultC.userID])
                // C also runs an agent, which must erase; both CLI profiles are interactive.
                let laptopC = try await CLITests.Devices.secondDevice(of: adultC, name: "Adult C's laptop", bed: bed)

                try await adultA.run(["revoke", emma, "--user", adultC.userID, "--reason", "custody change"])
                    .expectOneLineError("no terminal", "--yes")
                #expect(try await adultC.ok(["record", "show", emma, "--all"]).contains("penicillin allergy"), "C still reads")
                #expect(try await adultA.ok(["family-member", "list"]).contains("\(emma)  FMK v1"))

                let revoked = try await adultA.run(["revoke", emma, "--user", adultC.userID, "--reason", "custody change", "--yes"])
                #expect(revoked.status == 0, "\(revoked)")
                let out = revoked.stdout
                let preview = try #require(
                    out.range(of: "Adult C (user \(adultC.userID.lowercased())) will lose access to 1 family member(s); "
                        + "2 record(s) will be re-encrypted"), "\(revoked)")
                #expect(out.contains("  family member \(emma): 2 record(s)"), "\(revoked)")
                #expect(
                    out.contains("    erase  Adult C's laptop (device \(laptopC.deviceID.lowercased()), Adult C)"), "\(revoked)")
                #expect(!out.contains("rotate "), "A runs no agent, and CLI profiles are never commanded: \(revoked)")
                #expect(!out.contains(adultC.deviceID.lowercased()), "C's CLI profile holds nothing to erase: \(revoked)")
                #expect(out.contains("What revocation cannot do:"), "\(revoked)")
                #expect(out.contains("already saw, copied or exported") && out.contains("never comes back online"), "\(revoked)")
                let committed = try #require(
                    out.range(of: "revoked from \(emma): FMK v2, 2 records re-encrypted, 1 devices notified"), "\(revoked)")
                #expect(preview.upperBound <= committed.lowerBound, "the preview comes before the commit: \(revoked)")
                try await adultC.run(["record", "show", emma, "--all"]).expectOneLineError("403", "access_revoked")
            }
        }

        /// On a terminal (util-linux `script`), "n" changes nothing and "y" revokes.
        @Test(.timeLimit(.minutes(3)), .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script")))
        func onATerminalNoChangesNothingAndYesRevokes() async throws {
            try await CLITestBed.with { bed in
                let adultA = try await bed.person("Adult A")
                let adultC = try await bed.person("Adult C")
                let emma = try await adultA.ok(["family-member", "create"]).trimmed
                try await adultA.ok(["record", "add", emma, "--text", "penicillin allergy"])
                try await adultA.ok(["grant", emma, "--to", adultC.userID])
                let revoke = ["revoke", emma, "--user", adultC.userID]

                let declined = try await Self.onTerminal(adultA, revoke, typing: "n")
                #expect(declined.status != 0 && !declined.timedOut, "\(declined)")
                #expect(declined.stdout.contains("Adult C (user \(adultC.userID.lowercased())) will lose access"), "\(declined)")
                #expect(declined.stdout.contains("Revoke Adult C? [y/N]"), "\(declined)")
                #expect(declined.stdout.contains("not revoked: nothing changed"), "\(declined)")
                #expect(!declined.stdout.contains("revoked from"), "\(declined)")
                #expect(try await adultC.ok(["record", "show", emma, "--all"]).contains("penicillin allergy"), "C still reads")

                let accepted = try await Self.onTerminal(adultA, revoke, typing: "y")
                #expect(accepted.status == 0, "\(accepted)")
                #expect(accepted.stdout.contains("revoked from \(emma): FMK v2, 1 records re-encrypted"), "\(accepted)")
                try await adultC.run(["record", "show", emma, "--all"]).expectOneLineError("403", "access_revoked")
            }
        }

        /// `rescind arguments` as `profile`, on a pseudo-terminal that `script` gives it, typing `answer` and Return.
        /// (Both streams reach standard output through the terminal.)
        static func onTerminal(_ profile: CLIProfile, _ arguments: [String], typing answer: String) async throws -> RescindProcess.Output {
            let command = ([RescindProcess.binary.path] + arguments + ["--profile", profile.directory.path, "--grant-service", profile.grantService.absoluteString])
                .map { "'\($0)'" }.joined(separator: " ")
            return try await RescindProcess.run(
                ["-c", "printf '\(answer)\\n' | script -q -e -c \"\(command)\" /dev/null"], environment: profile.environment,
                executable: URL(fileURLWithPath: "/bin/sh"))
        }
    }
}
