import ArgumentParser
import Foundation
import Logging
import RescindConfiguration
import RescindCrypto
import RescindKafka
import RescindProtocol

/// Prints the messages of a topic as they arrive, as readable lines or raw JSON.
struct TailCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tail",
        abstract: "Follow a Kafka topic of Rescind as readable lines or JSON.",
        discussion: """
            Reads every partition of the topic (with RESCIND_TOPIC_PREFIX) from
            RESCIND_KAFKA_BOOTSTRAP_SERVERS without joining a consumer group, so it never
            takes messages away from the services. With --verify-key, signatures of
            grant-service messages are checked and shown (✓ / ✗).

            Examples:
              rescind-admin tail revocation_events --from-beginning
              rescind-admin tail device_acks --json --limit 10
            """)

    @Argument(help: "Topic: \(Topic.allCases.map(\.rawValue).joined(separator: ", ")).")
    var topic: Topic

    @Flag(help: "Start at the oldest retained message instead of the newest.")
    var fromBeginning = false

    @Flag(help: "Print each message's JSON as it is on the wire.")
    var json = false

    @Option(help: "Stop after this many messages.")
    var limit: Int?

    @Option(help: "Partitions of the topic to read.")
    var partitions: Int32 = 4

    @Option(help: "Base64 Ed25519 public key to verify grant-service signatures with.")
    var verifyKey: String?

    /// TLS and SASL for the brokers, from the shared `RESCIND_KAFKA_*` variables.
    static func kafkaSecurity(_ environment: [String: String]) throws -> [String: String] {
        var reader = EnvironmentReader(environment)
        do {
            return try reader.kafkaSecurity()
        } catch let error as ConfigurationError {
            throw CLIError(error.description)
        }
    }

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        var reader = EnvironmentReader(environment)
        let bootstrap = reader.string("RESCIND_KAFKA_BOOTSTRAP_SERVERS", default: "127.0.0.1:9092")
        let name = reader.string("RESCIND_TOPIC_PREFIX", default: "") + topic.rawValue
        let key = try verifyKey.map { text -> Ed25519.PublicKey in
            guard let bytes = Data(base64Encoded: text), let key = try? Ed25519.PublicKey(rawRepresentation: [UInt8](bytes)) else {
                throw CLIError("--verify-key must be a base64 Ed25519 public key")
            }
            return key
        }
        var logger = Logger(label: "rescind.tail")
        logger.logLevel = .error
        let consumer = try KafkaConsumer(
            configuration: KafkaConsumerConfiguration(
                bootstrapServers: bootstrap, clientID: "rescind-tail", additionalProperties: try Self.kafkaSecurity(environment)),
            subscription: .partitions(
                (0..<partitions).map {
                    KafkaPartitionAssignment(topic: name, partition: $0, start: fromBeginning ? .beginning : .end)
                }),
            logger: logger)
        var printed = 0
        for try await message in consumer.messages {
            print(json ? String(decoding: message.value ?? Data(), as: UTF8.self) : MessageLine(message, verifyingWith: key).text)
            printed += 1
            if let limit, printed >= limit { break }
        }
        await consumer.close()
    }
}

extension Topic: ExpressibleByArgument {}
