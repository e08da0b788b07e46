import Testing

extension CLITests {
    @Suite("rescind --help") struct Help {
        static let commands = [
            "", "identity", "identity create", "identity show", "identity code", "identity rotate", "identity passphrase",
            "family-member", "family-member create", "family-member list", "family-member transfer", "family-member adopt",
            "record", "record add", "record list", "record show", "grant", "revoke", "device", "device list", "device retire", "access-log", "revocation",
            "tail", "migrate", "stack", "keys", "keys generate", "keys public", "keys token", "demo",
        ]

        @Test(.timeLimit(.minutes(2)), arguments: commands)
        func helpSaysWhatItDoesWithAnExample(command: String) async throws {
            try #require(RescindProcess.isBuilt)
            let words = command.split(separator: " ").map(String.init)
            let help = try await RescindProcess.run(words + ["--help"])
            #expect(help.status == 0, "\(help)")
            #expect(help.stdout.contains("OVERVIEW: "), "\(help)")
            #expect(help.stdout.contains("Example"), "no example in `rescind \(command) --help`:\n\(help.stdout)")
            #expect(help.stdout.contains("USAGE: rescind \(command)".trimmingCharacters(in: .whitespaces)), "\(help)")
        }
    }
}
