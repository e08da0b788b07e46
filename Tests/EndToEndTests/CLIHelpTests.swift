import Foundation
import Testing

extension CLITests {
    @Suite("rescind, rescind-admin, rescind-dev --help") struct Help {
        static let commands = [
            "", "identity", "identity create", "identity show", "identity code", "identity trust", "identity rotate", "identity passphrase",
            "identity recovery-key", "identity backup",
            "family-member", "family-member create", "family-member list", "family-member transfer", "family-member adopt",
            "record", "record add", "record list", "record show", "record trash", "record restore", "grant", "invite", "invite create", "invite accept", "invite complete", "revoke", "rotate", "device", "device list", "device retire", "access-log", "revocation",
        ].map { "rescind \($0)" } + [
            "", "tail", "migrate", "keys", "keys generate", "keys public", "keys token",
        ].map { "rescind-admin \($0)" } + [
            "", "demo", "stack", "agent", "chaos",
        ].map { "rescind-dev \($0)" }

        /// `command`: the executable, then the subcommand's words.
        @Test(.timeLimit(.minutes(2)), arguments: commands)
        func helpSaysWhatItDoesWithAnExample(command: String) async throws {
            try #require(RescindProcess.isBuilt)
            let words = command.split(separator: " ").map(String.init)
            let executable = RescindProcess.binary.deletingLastPathComponent().appendingPathComponent(words[0])
            let help = try await RescindProcess.run(Array(words.dropFirst()) + ["--help"], executable: executable)
            #expect(help.status == 0, "\(help)")
            #expect(help.stdout.contains("OVERVIEW: "), "\(help)")
            #expect(help.stdout.contains("Example"), "no example in `\(command) --help`:\n\(help.stdout)")
            #expect(help.stdout.contains("USAGE: \(command)".trimmingCharacters(in: .whitespaces)), "\(help)")
        }

        /// The user's client offers none of the operator's or the developer's commands.
        @Test(.timeLimit(.minutes(1)), arguments: ["tail", "migrate", "keys", "stack", "demo", "chaos"])
        func theUsersClientHasNoOperatorOrDevCommands(command: String) async throws {
            try #require(RescindProcess.isBuilt)
            try await RescindProcess.run([command, "up"]).expectUsageError()
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
