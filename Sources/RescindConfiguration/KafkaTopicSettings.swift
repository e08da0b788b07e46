/// How Rescind's topics are to be provisioned (`rescind-admin migrate kafka`), from the
/// `RESCIND_KAFKA_TOPIC*` variables (`EnvironmentReader.kafkaTopics(names:)`).
public struct KafkaTopicSettings: Sendable, Hashable {
    public struct Topic: Sendable, Hashable {
        /// The topic's name without `RESCIND_TOPIC_PREFIX`.
        public var name: String
        public var partitions: Int
        public var replicationFactor: Int
        /// `retention.ms`; -1 keeps messages for ever.
        public var retentionMilliseconds: Int
        /// `cleanup.policy`: `delete`, `compact` or `compact,delete`.
        public var cleanupPolicy: String

        /// The topic-level configuration entries provisioning sets and verifies.
        public var configuration: [String: String] {
            ["retention.ms": String(retentionMilliseconds), "cleanup.policy": cleanupPolicy]
        }
    }

    /// Prepended to every topic name; `RESCIND_TOPIC_PREFIX`.
    public var prefix: String
    public var topics: [Topic]
    /// `RESCIND_KAFKA_TOPICS_AUTO_CREATED`: the broker creates topics on first use and has
    /// no Admin API (the development broker). Services then do not wait for their topics,
    /// and nothing provisions them. Default `false`.
    public var autoCreated: Bool
}

extension EnvironmentReader {
    /// Reads the topic settings: defaults for every topic, overridden per topic.
    ///
    /// | variable | default |
    /// |---|---|
    /// | `RESCIND_KAFKA_TOPIC_PARTITIONS` / `RESCIND_KAFKA_TOPIC_<NAME>_PARTITIONS` | `4` |
    /// | `RESCIND_KAFKA_TOPIC_REPLICATION_FACTOR` / `…_<NAME>_REPLICATION_FACTOR` | `1` (3 on a real cluster) |
    /// | `RESCIND_KAFKA_TOPIC_RETENTION_MS` / `…_<NAME>_RETENTION_MS` | `604800000` (7 days; -1 for ever) |
    /// | `RESCIND_KAFKA_TOPIC_CLEANUP_POLICY` / `…_<NAME>_CLEANUP_POLICY` | `delete` |
    ///
    /// `<NAME>` is the topic's name in capitals (`DEVICE_COMMANDS`).
    /// - Throws: `ConfigurationError` naming the variable of a value out of range.
    public mutating func kafkaTopics(names: [String]) throws -> KafkaTopicSettings {
        let partitions = try int("RESCIND_KAFKA_TOPIC_PARTITIONS", default: 4, range: 1...10_000)
        let replication = try int("RESCIND_KAFKA_TOPIC_REPLICATION_FACTOR", default: 1, range: 1...32)
        let retention = try int("RESCIND_KAFKA_TOPIC_RETENTION_MS", default: 604_800_000, range: -1...Int(Int64.max))
        let cleanup = try cleanupPolicy("RESCIND_KAFKA_TOPIC_CLEANUP_POLICY", default: "delete")
        var topics: [KafkaTopicSettings.Topic] = []
        for name in names {
            let variable = "RESCIND_KAFKA_TOPIC_\(name.uppercased())"
            topics.append(.init(
                name: name,
                partitions: try int("\(variable)_PARTITIONS", default: partitions, range: 1...10_000),
                replicationFactor: try int("\(variable)_REPLICATION_FACTOR", default: replication, range: 1...32),
                retentionMilliseconds: try int("\(variable)_RETENTION_MS", default: retention, range: -1...Int(Int64.max)),
                cleanupPolicy: try cleanupPolicy("\(variable)_CLEANUP_POLICY", default: cleanup)))
        }
        return KafkaTopicSettings(
            prefix: string("RESCIND_TOPIC_PREFIX", default: ""), topics: topics,
            autoCreated: try bool("RESCIND_KAFKA_TOPICS_AUTO_CREATED", default: false))
    }

    private mutating func cleanupPolicy(_ name: String, default value: String) throws -> String {
        let text = String(string(name, default: value).lowercased().filter { $0 != " " })
        let policies = text.split(separator: ",").map(String.init)
        guard !policies.isEmpty, policies.allSatisfy({ $0 == "delete" || $0 == "compact" }), Set(policies).count == policies.count else {
            throw ConfigurationError(variable: name, problem: "expected delete, compact or compact,delete")
        }
        return policies.sorted().joined(separator: ",")
    }
}
