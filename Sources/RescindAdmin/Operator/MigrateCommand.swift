import ArgumentParser
import Foundation
import Logging
import RescindPostgres

/// Applies a service's migrations (the services also do it at start unless told not to).
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Apply pending database migrations of a service's schema, or provision the Kafka topics.",
        discussion: """
            Applies migrations/<service>/*.sql in order, each once, in its own transaction,
            to the service's schema on RESCIND_DATABASE_URL. Safe to run while replicas start.

            \(MigrateKafkaCommand.discussion)

            Examples:
              rescind-admin migrate grant --schema grant_service
              rescind-admin migrate kafka
            """)

    enum Service: String, ExpressibleByArgument, CaseIterable {
        case grant, audit, kafka

        var defaultSchema: String { self == .grant ? "grant_service" : "audit_service" }
    }

    @Argument(help: "Which service's schema (grant or audit), or kafka for the topics.")
    var service: Service

    @Option(help: "Schema name (default: grant_service or audit_service).")
    var schema: String?

    @Option(help: "Directory of the migrations (default: migrations/<service>).")
    var directory: String?

    @Flag(help: "kafka: verify the topics only, create nothing.")
    var verifyOnly = false

    func run() async throws {
        if service == .kafka {
            return try await MigrateKafkaCommand.run(verifyOnly: verifyOnly)
        }
        let logger = Logger(label: "rescind.migrate")
        let schema = schema ?? service.defaultSchema
        var configuration = try PostgresConfiguration(environment: ProcessInfo.processInfo.environment)
        configuration.applicationName = "rescind-migrate"
        let pool = PostgresConnectionPool(configuration: configuration, size: 1, logger: logger)
        defer { Task { await pool.close() } }
        try await pool.withConnection { connection in
            try await connection.execute("CREATE SCHEMA IF NOT EXISTS \(identifier: schema)")
        }
        let applied = try await PostgresMigrator(
            directory: URL(fileURLWithPath: directory ?? "migrations/\(service.rawValue)"), schema: schema, logger: logger
        ).migrate(using: pool)
        print(applied.isEmpty ? "\(schema): up to date" : "\(schema): applied \(applied.joined(separator: ", "))")
    }
}
