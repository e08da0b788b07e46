import ArgumentParser
import Foundation
import RescindConfiguration
import RescindObservability

/// `rescind-admin`: the operator's tool. Kept apart from the user's `rescind`, which links
/// only the client side; this one may reach PostgreSQL and Kafka.
@main
struct RescindAdmin: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rescind-admin",
        abstract: "Operate Rescind: database migrations, the topics, key and token files.",
        discussion: """
            Settings come from RESCIND_* environment variables (see docs/configuration.md).

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

    /// With `RESCIND_LOG_FORMAT=json`, log lines are JSON objects on standard error (at
    /// `RESCIND_LOG_LEVEL`), apart from the command's output on standard output; otherwise the
    /// logging stays swift-log's default. An unknown format stops the tool before it does anything.
    static func main() async {
        let environment = ProcessInfo.processInfo.environment
        do {
            if try LogFormat(environment: environment) == .json {
                try RescindLogging.bootstrap(
                    level: EnvironmentReader.value("RESCIND_LOG_LEVEL", in: environment) ?? "info", environment: environment)
            }
        } catch {
            FileHandle.standardError.write(Data("rescind-admin: \(error)\n".utf8))
            Foundation.exit(1)
        }
        await main(nil)
    }
}
