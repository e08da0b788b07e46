import ArgumentParser
import Foundation
import Logging
import RescindConfiguration
import RescindKafka

/// `rescind-admin migrate kafka`: Rescind's topics provisioned like its database schema.
/// The logic is `TopicProvisioning` (RescindKafka); this only reads the settings and prints.
enum MigrateKafkaCommand {
    static let discussion = """
        kafka: creates the five topics that are missing (RESCIND_TOPIC_PREFIX + revocation_events,
        access_events, device_commands, device_acks, audit_notifications) through the Kafka Admin
        API on RESCIND_KAFKA_BOOTSTRAP_SERVERS, with RESCIND_KAFKA_TOPIC_PARTITIONS (4),
        _REPLICATION_FACTOR (1), _RETENTION_MS (7 days) and _CLEANUP_POLICY (delete), each
        overridable per topic (RESCIND_KAFKA_TOPIC_DEVICE_COMMANDS_PARTITIONS, …). Existing topics
        are verified: too few partitions, too few replicas or another retention or cleanup policy
        is reported as drift and the command exits with status 2 (it changes no existing topic).
        --verify-only creates nothing (missing topics: status 2 as well).
        """

    /// The specs of every topic from the environment's settings.
    static func specs(_ settings: KafkaTopicSettings) -> [KafkaTopic] {
        settings.topics.map {
            KafkaTopic(
                name: settings.prefix + $0.name, partitions: Int32($0.partitions),
                replicationFactor: Int16($0.replicationFactor), configuration: $0.configuration)
        }
    }

    static func settings(_ environment: [String: String]) throws -> (KafkaTopicSettings, [String: String]) {
        var reader = EnvironmentReader(environment)
        do {
            return (try reader.kafkaTopics(names: RescindTopics.all), try reader.kafkaSecurity())
        } catch let error as ConfigurationError {
            throw CLIError(error.description)
        }
    }

    /// Provisions (or only verifies) the topics; `nil` when the broker creates topics by
    /// itself (`RESCIND_KAFKA_TOPICS_AUTO_CREATED`).
    static func provision(
        environment: [String: String], verifyOnly: Bool, logger: Logger
    ) async throws -> TopicProvisioning.Report? {
        let (settings, security) = try settings(environment)
        guard !settings.autoCreated else { return nil }
        let admin = try KafkaAdmin(
            bootstrapServers: EnvironmentReader.value("RESCIND_KAFKA_BOOTSTRAP_SERVERS", in: environment) ?? "127.0.0.1:9092",
            clientID: "rescind-migrate", additionalProperties: security, logger: logger)
        do {
            return try await TopicProvisioning(topics: specs(settings)).run(with: admin, createMissing: !verifyOnly)
        } catch let error as KafkaError where error.rdKafkaName == "_TIMED_OUT" {
            throw CLIError(
                "kafka: the brokers did not answer the Admin API in time (\(error.detail)); a broker without one, "
                    + "such as the development broker, creates topics itself: set RESCIND_KAFKA_TOPICS_AUTO_CREATED=true")
        }
    }

    static func run(verifyOnly: Bool) async throws {
        var logger = Logger(label: "rescind.migrate.kafka")
        logger.logLevel = .error
        guard let report = try await provision(
            environment: ProcessInfo.processInfo.environment, verifyOnly: verifyOnly, logger: logger)
        else {
            print("kafka: RESCIND_KAFKA_TOPICS_AUTO_CREATED=true, the broker creates topics on first use: nothing to do")
            return
        }
        for name in report.created { print("kafka: created \(name)") }
        for name in report.verified { print("kafka: \(name) up to date") }
        for name in report.missing { printError("kafka: missing \(name)") }
        for drift in report.drift { printError("kafka: drift: \(drift)") }
        guard report.isClean else {
            printError("kafka: \(report.drift.count) drift, \(report.missing.count) missing: the topics do not match the configuration")
            throw ExitCode(2)
        }
    }

    private static func printError(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
