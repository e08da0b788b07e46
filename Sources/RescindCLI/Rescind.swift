import ArgumentParser
import RescindObservability

/// `rescind`: a user's client for Rescind. It links only the client side (client, protocol,
/// crypto, configuration, TLS); the operator's commands are `rescind-admin`, the demo and the
/// local stack `rescind-dev` (ArchitectureTests checks the graph).
@main
struct Rescind: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rescind",
        abstract: "Revoke access to end-to-end-encrypted family medical records, and watch it happen.",
        discussion: """
            It keeps your keys in an encrypted profile and does all encryption and key
            wrapping on this machine. Operators use rescind-admin (migrations, topics, key
            files); developers rescind-dev (the demo, the local stack).
            Settings come from RESCIND_* environment variables (see docs/configuration.md).

            Examples:
              RESCIND_PASSPHRASE=… rescind identity create --name "Adult A"
              rescind revoke 6f1c… --user 93ab… --reason "custody change"
              rescind access-log 6f1c… --verify

            \(ExitStatus.helpText)
            """,
        version: RescindVersion.current,
        subcommands: [
            IdentityCommand.self,
            FamilyMemberCommand.self,
            RecordCommand.self,
            GrantCommand.self,
            InviteCommand.self,
            RevokeCommand.self,
            RotateCommand.self,
            DevicesCommand.self,
            AccessLogCommand.self,
            RevocationStatusCommand.self,
        ])
}
