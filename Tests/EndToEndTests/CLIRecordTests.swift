import Foundation
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
    }
}
