import Foundation
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
                try await adultC.run(["revoke", emma, "--user", adultA.userID]).expectOneLineError("403")

                let revoked = try await adultA.run(["revoke", emma, "--user", adultC.userID, "--reason", "custody change", "--batch-size", "2"])
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

                let revoked = try await adultA.run(["revoke", "--everywhere", "--user", adultB.userID, "--reason", "device stolen"])
                #expect(revoked.status == 0, "\(revoked)")
                for member in members {
                    #expect(revoked.stdout.contains("revoked from \(member): FMK v2, 1 records re-encrypted"), "\(revoked)")
                    try await adultB.run(["record", "show", member, "--all"]).expectOneLineError("403", "access_revoked")
                }
                #expect(revoked.stderr.contains("committed"), "no progress shown: \(revoked)")
                #expect(try await adultB.ok(["family-member", "list"]).trimmed == "\(noah)  FMK v1  shared with you")
            }
        }
    }
}
