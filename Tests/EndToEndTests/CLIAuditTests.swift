import Foundation
import Testing

extension CLITests {
    @Suite("rescind access-log and revocation") struct Audit {
        @Test(.timeLimit(.minutes(3)))
        func theOwnerReadsTheDecryptedLogAndTheRevocationsAcks() async throws {
            try await CLITestBed.with(audit: true) { bed in
                let adultA = try await bed.person("Adult A")
                let adultB = try await bed.person("Adult B")
                let emma = try await adultA.ok(["family-member", "create"]).trimmed
                try await adultA.ok(["record", "add", emma, "--text", "penicillin allergy"])
                try await adultA.ok(["record", "add", emma, "--text", "MMR vaccination, dose 1"])
                try await adultA.ok(["grant", emma, "--to", adultB.userID])
                let revoked = try await adultA.ok(["revoke", emma, "--user", adultB.userID, "--reason", "custody change", "--yes"])
                let eventID = try #require(
                    revoked.firstMatch(of: /\(event ([0-9a-f-]{36})\)/).map { String($0.output.1) }, "\(revoked)")

                // The audit service consumes the events asynchronously, from two topics (access_events
                // and revocation_events) in no common order: wait for every entry, not the first.
                // No device is expected (both profiles are interactive), so the revocation completes at once.
                let expected = [
                    "family member created", "access granted for Adult B", "access revoked for Adult B",
                    "revocation completed for Adult B",
                ]
                let log = try await CLITestBed.eventually("all four entries in the access log") { () -> String? in
                    let output = try await adultA.run(["access-log", emma])
                    guard output.status == 0 else { return nil }
                    return expected.allSatisfy(output.stdout.contains) ? output.stdout : nil
                }
                let lines = log.split(separator: "\n").map(String.init)
                // The chain's order is the order the audit service consumed its topics in, so only presence is checked.
                #expect(lines.count == 4, "\(log)")
                #expect(lines.contains { $0.contains("revocation completed for Adult B (by Adult A), 0 devices") }, "\(log)")
                #expect(lines.contains { $0.hasSuffix("family member created (by Adult A)") }, "\(log)")
                #expect(lines.contains { $0.hasSuffix("access granted for Adult B (by Adult A)") }, "\(log)")
                let revocation = try #require(lines.firstIndex { $0.contains("access revoked for Adult B (by Adult A)") }, "\(log)")
                // The details were sealed to A's key and opened here.
                #expect(lines[revocation].contains("2 records re-encrypted") && lines[revocation].hasSuffix("— custody change"), "\(log)")
                #expect(!log.contains("sealed to another key"), "\(log)")

                // Verified here, with the audit service's key pinned on first use next to the keystore.
                let verified = try await adultA.ok(["access-log", emma, "--verify"])
                #expect(verified.contains("chain verified on this machine: 4 entries, none altered, removed, reordered or added"), "\(verified)")
                #expect(verified.contains("  head hash ") && verified.contains("(pinned now)"), "\(verified)")
                let pinPath = adultA.directory.appendingPathComponent("audit-service.key").path
                let mode = try FileManager.default.attributesOfItem(atPath: pinPath)[.posixPermissions] as? Int
                #expect(mode == 0o600)
                let again = try await adultA.ok(["access-log", emma, "--verify"])
                #expect(again.contains("chain verified on this machine") && again.contains("(pinned)"), "\(again)")
                // A swapped audit key is refused, unless the user explicitly accepts the new one.
                let pinned = try Data(contentsOf: URL(fileURLWithPath: pinPath))
                try Data((Data(repeating: 7, count: 32).base64EncodedString() + "\n").utf8).write(to: URL(fileURLWithPath: pinPath))
                try await adultA.run(["access-log", emma, "--verify"]).expectOneLineError("now signs with key", "--accept-new-audit-key")
                let accepted = try await adultA.ok(["access-log", emma, "--verify", "--accept-new-audit-key"])
                #expect(accepted.contains("chain verified on this machine") && accepted.contains("(pinned now)"), "\(accepted)")
                #expect(try Data(contentsOf: URL(fileURLWithPath: pinPath)) == pinned)

                // Only the owner reads the log; others get one line.
                try await adultB.run(["access-log", emma]).expectOneLineError("403")
                try await adultB.run(["access-log", emma, "--verify"]).expectOneLineError("403")
                try await adultA.run(["access-log", "emma"]).expectUsageError()

                // Both users have only CLI profiles: interactive devices keep nothing to rotate or
                // erase, so no device is expected and the revocation is complete at once.
                let status = try await CLITestBed.eventually("the revocation's status") { () -> String? in
                    let output = try await adultA.run(["revocation", eventID])
                    return output.status == 0 ? output.stdout : nil
                }
                #expect(status.contains("family member \(emma) → FMK v2, 2 records"), "\(status)")
                #expect(status.contains("complete") && !status.contains("deadline"), "\(status)")
                #expect(status.split(separator: "\n").filter { $0.hasPrefix("  ") }.isEmpty, "\(status)")
                let listed = try await adultB.ok(["device", "list"])
                #expect(listed.contains(adultB.deviceID) && listed.contains("interactive"), "\(listed)")

                try await adultA.run(["revocation", UUID().uuidString.lowercased()]).expectOneLineError("404")
                try await adultA.run(["revocation"]).expectUsageError()
                // The monitoring API shows an owner their own family members only: to B, who does
                // not own Emma, A's revocation does not exist.
                try await adultB.run(["revocation", eventID]).expectOneLineError("404")
                // The operator's token (a file, as the service reads it) sees it, without a profile.
                let tokenFile = try #require(bed.audit?.configuration.monitoring.operatorTokenFile)
                let asOperator = try await adultB.run(["revocation", eventID, "--operator-token-file", tokenFile])
                #expect(asOperator.status == 0 && asOperator.stdout.contains("family member \(emma) → FMK v2"), "\(asOperator)")
                let unreadable = bed.root.appendingPathComponent("no-such.token").path
                try await adultB.run(["revocation", eventID, "--operator-token-file", unreadable]).expectOneLineError("401")
            }
        }
    }
}
