import Foundation
import RescindClient
import RescindTestSupport
import Testing

extension CLITests {
    @Suite("rescind record") struct Record {
        @Test(.timeLimit(.minutes(3)))
        func addListShowAndTheRefusals() async throws {
            try await CLITestBed.with { bed in
                let adultA = try await bed.person("Adult A")
                let emma = try await adultA.ok(["family-member", "create"]).trimmed

                let byText = try await adultA.ok(["record", "add", emma, "--text", "2025-01-05 MMR vaccination, dose 1"]).trimmed
                let file = bed.root.appendingPathComponent("lab-result.txt")
                try Data("ferritin 48 ng/mL\nhaemoglobin 12.9 g/dL".utf8).write(to: file)
                let byFile = try await adultA.ok(["record", "add", emma, "--file", file.path]).trimmed
                #expect(UUID(uuidString: byText) != nil && UUID(uuidString: byFile) != nil)

                // Exactly one source of plaintext, and it must be readable.
                try await adultA.run(["record", "add", emma, "--text", "x", "--file", file.path])
                    .expectUsageError("exactly one of --text or --file")
                try await adultA.run(["record", "add", emma]).expectUsageError("exactly one of --text or --file")
                let missing = bed.root.appendingPathComponent("no-such-file").path
                try await adultA.run(["record", "add", emma, "--file", missing]).expectOneLineError("cannot read \(missing)")

                // The list shows ids, versions and sizes, never plaintext.
                let listed = try await adultA.ok(["record", "list", emma])
                let lines = listed.split(separator: "\n")
                #expect(lines.count == 2, "\(listed)")
                #expect(lines.allSatisfy { $0.contains("  v1  ") && $0.hasSuffix(" bytes") }, "\(listed)")
                #expect(Set(lines.compactMap { $0.split(separator: " ").first.map(String.init) }) == [byText, byFile])
                #expect(!listed.contains("MMR") && !listed.contains("ferritin"))

                #expect(try await adultA.ok(["record", "show", emma, byText]).trimmed == "2025-01-05 MMR vaccination, dose 1")
                #expect(try await adultA.ok(["record", "show", emma, byFile]).trimmed == "ferritin 48 ng/mL\nhaemoglobin 12.9 g/dL")
                let all = try await adultA.ok(["record", "show", emma, "--all"])
                #expect(all.contains("\(byText)  2025-01-05 MMR vaccination, dose 1") && all.contains("\(byFile)  ferritin"), "\(all)")

                try await adultA.run(["record", "show", emma, UUID().uuidString]).expectOneLineError("no record")
                try await adultA.run(["record", "show", emma]).expectUsageError("--all")
                try await adultA.run(["record", "list", UUID().uuidString]).expectOneLineError("404")

                // Someone without access gets the grant service's refusal.
                let stranger = try await bed.person("Stranger")
                try await stranger.run(["record", "list", emma]).expectOneLineError("403")
                try await stranger.run(["record", "add", emma, "--text", "forged"]).expectOneLineError("403")
            }
        }

        @Test(.timeLimit(.minutes(3)))
        func trashAndRestoreWhatAGranteesDeviceDeletedAndOverwrote() async throws {
            try await CLITestBed.with { bed in
                let adultA = try await bed.person("Adult A")
                let emma = try await adultA.ok(["family-member", "create"]).trimmed
                let vaccination = try await adultA.ok(["record", "add", emma, "--text", "2025-01-05 MMR vaccination, dose 1"]).trimmed
                let allergy = try await adultA.ok(["record", "add", emma, "--text", "allergy: penicillin"]).trimmed
                #expect(try await adultA.ok(["record", "trash", emma]).contains("nothing deleted or overwritten in the last 30 days"))

                // Adult B's device, with write access, deletes one record and overwrites the other.
                let adultB = try await bed.grant.user("Adult B")
                try await adultA.ok(["grant", emma, "--to", adultB.keys.userID.uuidString.lowercased()])
                let emmaID = try #require(UUID(uuidString: emma))
                let (fmk, version) = try await adultB.currentFMK(emmaID)
                try await adultB.client.deleteRecord(emmaID, try #require(UUID(uuidString: vaccination)))
                _ = try await adultB.putRecord(
                    emmaID, recordID: try #require(UUID(uuidString: allergy)), plaintext: Array("allergy: none".utf8), fmk: fmk,
                    version: version)

                let trash = try await adultA.ok(["record", "trash", emma])
                let lines = trash.split(separator: "\n")
                #expect(lines.count == 2, "\(trash)")
                let device = adultB.deviceID.uuidString.lowercased()
                #expect(lines.contains { $0.hasPrefix("\(vaccination)  deleted  ") && $0.contains("by device \(device)") }, "\(trash)")
                #expect(lines.contains { $0.hasPrefix("\(allergy)  overwritten  ") && $0.contains("by device \(device)") }, "\(trash)")
                #expect(!trash.contains("MMR") && !trash.contains("penicillin"), "nothing is decrypted")

                // Only the owner restores; then everyone reads the record as it was.
                let stranger = try await bed.person("Stranger")
                try await stranger.run(["record", "restore", emma, vaccination]).expectOneLineError("403")
                try await stranger.run(["record", "trash", emma]).expectOneLineError("403")
                #expect(try await adultA.ok(["record", "restore", emma, vaccination]).hasPrefix("restored \(vaccination)  v1  "))
                #expect(try await adultA.ok(["record", "restore", emma, allergy]).hasPrefix("restored \(allergy)  v1  "))
                #expect(try await adultA.ok(["record", "show", emma, vaccination]).trimmed == "2025-01-05 MMR vaccination, dose 1")
                #expect(try await adultA.ok(["record", "show", emma, allergy]).trimmed == "allergy: penicillin")
                // The overwrite the restore replaced is kept in turn; a record with nothing kept is a clear error.
                #expect(try await adultA.ok(["record", "trash", emma]).split(separator: "\n").count == 1)
                try await adultA.run(["record", "restore", emma, UUID().uuidString]).expectOneLineError("no_restorable_version")
            }
        }
    }
}
