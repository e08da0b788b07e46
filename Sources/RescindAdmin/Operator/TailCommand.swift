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
              rescind-admin tail audit_notifications --json --from-beginning --until-end > notifications.jsonl
            """)

    @Argument(help: "Topic: \(Topic.allCases.map(\.rawValue).joined(separator: ", ")).")
    var topic: Topic

    @Flag(help: "Start at the oldest retained message instead of the newest.")
    var fromBeginning = false

    @Flag(help: "Print each message's JSON as it is on the wire.")
    var json = false

    @Option(help: "Stop after this many messages.")
    var limit: Int?

    @Flag(help: "With --from-beginning: exit once every message the topic held when tail started is printed.")
    var untilEnd = false

    @Option(help: "Partitions of the topic to read (default: every partition it has).")
    var partitions: Int32?

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

    func validate() throws {
        guard !untilEnd || fromBeginning else {
            throw ValidationError("--until-end reads what the topic holds: use it with --from-beginning")
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
        let security = try Self.kafkaSecurity(environment)
        var count = partitions ?? 0
        if partitions == nil { count = try await Self.partitionCount(of: name, bootstrap: bootstrap, security: security, logger: logger) }
        let consumer = try KafkaConsumer(
            configuration: KafkaConsumerConfiguration(bootstrapServers: bootstrap, clientID: "rescind-tail", additionalProperties: security),
            subscription: .partitions(
                (0..<count).map {
                    KafkaPartitionAssignment(topic: name, partition: $0, start: fromBeginning ? .beginning : .end)
                }),
            logger: logger)
        // With --until-end: the last offset of each partition that holds anything now.
        var unread: [Int32: Int64] = [:]
        if untilEnd {
            for marks in try await consumer.watermarks() where marks.high > marks.low {
                unread[marks.partition] = marks.high - 1
            }
        }
        var printed = 0
        if !(untilEnd && unread.isEmpty) {
            for try await message in consumer.messages {
                print(json ? String(decoding: message.value ?? Data(), as: UTF8.self) : MessageLine(message, verifyingWith: key).text)
                printed += 1
                if let limit, printed >= limit { break }
                if untilEnd, let last = unread[message.partition], message.offset >= last {
                    unread[message.partition] = nil
                    if unread.isEmpty { break }
                }
            }
        }
        await consumer.close()
    }
}

extension TailCommand {
    /// The topic's partition count from the cluster's metadata.
    static func partitionCount(of topic: String, bootstrap: String, security: [String: String], logger: Logger) async throws -> Int32 {
        let admin = try KafkaAdmin(bootstrapServers: bootstrap, clientID: "rescind-tail", additionalProperties: security, logger: logger)
        guard let description = try await admin.existingTopics([topic])[topic] else {
            throw CLIError("the topic \(topic) does not exist on \(bootstrap)")
        }
        return description.partitions
    }
}

extension Topic: ExpressibleByArgument {}
