import ArgumentParser

/// `rescind`: the operator's tool and a user's client for Rescind.
@main
struct Rescind: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rescind",
        abstract: "Revoke access to end-to-end-encrypted family medical records, and watch it happen.",
        discussion: """
            As a user's client it keeps your keys in an encrypted profile and does all
            encryption and key wrapping on this machine; as an operator's tool it runs
            migrations, controls the local stack, reads the topics and plays the demo.
            Settings come from RESCIND_* environment variables (see README, "Configuration").

            Examples:
              RESCIND_PASSPHRASE=… rescind identity create --name "Adult A"
              rescind revoke 6f1c… --user 93ab… --reason "custody change"
              rescind tail device_commands --from-beginning
            """,
        subcommands: [
            IdentityCommand.self,
            FamilyMemberCommand.self,
            RecordCommand.self,
            GrantCommand.self,
            RevokeCommand.self,
            DevicesCommand.self,
            AccessLogCommand.self,
            RevocationStatusCommand.self,
            TailCommand.self,
            MigrateCommand.self,
            StackCommand.self,
            KeysCommand.self,
            DemoCommand.self,
        ])
}
