import Foundation
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

        /// The agent's help needs no configuration and names every subcommand, with examples.
        @Test(.timeLimit(.minutes(1)))
        func theAgentsHelpNeedsNoConfiguration() async throws {
            try #require(FileManager.default.isExecutableFile(atPath: RescindProcess.agentBinary.path))
            for arguments in [["--help"], ["help"], ["rotate-identity", "--help"]] {
                let help = try await RescindProcess.run(arguments, environment: [:], executable: RescindProcess.agentBinary)
                #expect(help.status == 0, "\(help)")
                for command in ["provision-device", "rotate-identity", "update-identity", "change-passphrase", "examples:"] {
                    #expect(help.stdout.contains(command), "\(command) missing from `rescind-agent \(arguments.joined(separator: " "))`")
                }
            }
        }
    }
}
