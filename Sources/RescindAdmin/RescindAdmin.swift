import ArgumentParser
import RescindObservability

/// `rescind-admin`: the operator's tool. Kept apart from the user's `rescind`, which links
/// only the client side; this one may reach PostgreSQL and Kafka.
@main
struct RescindAdmin: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rescind-admin",
        abstract: "Operate Rescind: database migrations, the topics, key and token files.",
        discussion: """
            Settings come from RESCIND_* environment variables (see README, "Configuration").

            Examples:
              rescind-admin migrate grant --schema grant_service
              rescind-admin tail device_commands --from-beginning
              rescind-admin keys token deploy/secrets/audit-operator.token
            """,
        version: RescindVersion.current,
        subcommands: [
            TailCommand.self,
            MigrateCommand.self,
            KeysCommand.self,
        ])
}
