import ArgumentParser

/// `rescind`: the operator's tool and a user's client for Rescind.
@main
struct Rescind: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rescind",
        abstract: "Revoke access to end-to-end-encrypted family medical records, and watch it happen.",
        discussion: """
            Operator commands run migrations, control the local stack and read the topics.
            Settings come from RESCIND_* environment variables (see README, "Configuration").

            Example:
              rescind tail device_commands --from-beginning
            """,
        subcommands: [
            TailCommand.self,
            MigrateCommand.self,
            StackCommand.self,
            KeysCommand.self,
            DemoCommand.self,
        ])
}
