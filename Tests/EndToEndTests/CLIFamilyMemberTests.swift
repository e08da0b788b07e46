import Foundation
import Testing

extension CLITests {
    @Suite("rescind family-member") struct FamilyMember {
        @Test(.timeLimit(.minutes(3)))
        func createListTransferAndAdopt() async throws {
            try await CLITestBed.with { bed in
                let adultA = try await bed.person("Adult A")
                let adultB = try await bed.person("Adult B")
                let adultC = try await bed.person("Adult C")
                let emma = try await adultA.ok(["family-member", "create"]).trimmed
                #expect(UUID(uuidString: emma) != nil, "not an id: \(emma)")
                #expect(try await adultA.ok(["family-member", "list"]).trimmed == "\(emma)  FMK v1  owner")
                #expect(try await adultB.ok(["family-member", "list"]).trimmed.isEmpty)

                try await adultA.ok(["record", "add", emma, "--text", "penicillin allergy"])
                try await adultA.ok(["grant", emma, "--to", adultB.userID])
                #expect(try await adultB.ok(["family-member", "list"]).trimmed == "\(emma)  FMK v1  shared with you")

                // Ownership passes only to someone who already has access, and only from the owner.
                try await adultA.run(["family-member", "transfer", emma, "--to", adultC.userID])
                    .expectOneLineError("not_a_grantee")
                try await adultB.run(["family-member", "transfer", emma, "--to", adultB.userID])
                    .expectOneLineError("403")
                try await adultA.run(["family-member", "transfer", emma]).expectUsageError("--to")
                try await adultA.run(["family-member", "transfer", "not-an-id", "--to", adultB.userID]).expectUsageError()

                // From one device the transfer waits for the security delay; with A's recovery words it is immediate.
                let pending = try await adultA.ok(["family-member", "transfer", emma, "--to", adultB.userID])
                #expect(pending.contains("transfer pending: operation "), "\(pending)")
                #expect(try await adultA.ok(["identity", "pending"]).contains("ownership transfer of \(emma) to \(adultB.userID)"))
                let operation = try #require(pending.firstMatch(of: /operation ([0-9a-f-]{36})/).map { String($0.1) })
                try await adultA.ok(["identity", "cancel", operation])
                let words = try #require(adultA.recoveryWords).path
                let transferred = try await adultA.ok(["family-member", "transfer", emma, "--to", adultB.userID, "--words-file", words])
                #expect(transferred.contains("owner is now \(adultB.userID)"), "\(transferred)")
                #expect(transferred.contains("rescind family-member adopt \(emma)"), "\(transferred)")
                let adopted = try await adultB.ok(["family-member", "adopt", emma])
                #expect(adopted.contains("wrapped under your master key"), "\(adopted)")
                #expect(try await adultB.ok(["family-member", "list"]).trimmed == "\(emma)  FMK v1  owner")

                // The new owner runs the family member: reads, adds, shares.
                #expect(try await adultB.ok(["record", "show", emma, "--all"]).contains("penicillin allergy"))
                try await adultB.ok(["record", "add", emma, "--text", "2025-03-02 blood test"])
                try await adultB.ok(["grant", emma, "--to", adultC.userID])
                #expect(try await adultC.ok(["record", "show", emma, "--all"]).contains("2025-03-02 blood test"))
                try await adultC.run(["family-member", "adopt", emma]).expectOneLineError("you do not own \(emma)")

                // A pending transfer approved later with the words: the CLI signs the statement the
                // operation shows. Ownership goes only to a key B pinned by comparing codes, and
                // another user's words approve nothing.
                let code = { (printed: String) in String(printed.split(separator: " ").dropFirst(2).first ?? "") }
                try await adultB.ok(["identity", "trust", adultC.userID, "--code", code(try await adultC.ok(["identity", "code", "--with", adultB.userID]))])
                let pendingToC = try await adultB.ok(["family-member", "transfer", emma, "--to", adultC.userID])
                let toC = try #require(pendingToC.firstMatch(of: /operation ([0-9a-f-]{36})/).map { String($0.1) }, "\(pendingToC)")
                try await adultB.run(["identity", "approve", toC, "--words-file", try #require(adultC.recoveryWords).path])
                    .expectOneLineError("bad_signature")
                let approved = try await adultB.ok(["identity", "approve", toC, "--words-file", try #require(adultB.recoveryWords).path])
                #expect(approved.contains("operation \(toC) applied"), "\(approved)")
                #expect(try await adultC.ok(["family-member", "adopt", emma]).contains("wrapped under your master key"))
                #expect(try await adultC.ok(["family-member", "list"]).trimmed == "\(emma)  FMK v1  owner")
            }
        }
    }
}
