import RescindConfiguration
import Testing

/// How `rescind-admin migrate kafka` reads the topics it provisions.
@Suite struct KafkaTopicSettingsTests {
    static let names = ["revocation_events", "device_commands"]

    @Test func defaultsForEveryTopic() throws {
        var reader = EnvironmentReader([:])
        let settings = try reader.kafkaTopics(names: Self.names)
        #expect(settings.prefix == "" && settings.autoCreated == false)
        #expect(settings.topics.map(\.name) == Self.names)
        for topic in settings.topics {
            #expect(topic.partitions == 4 && topic.replicationFactor == 1)
            #expect(topic.configuration == ["retention.ms": "604800000", "cleanup.policy": "delete"])
        }
    }

    @Test func globalSettingsAndPerTopicOverrides() throws {
        var reader = EnvironmentReader([
            "RESCIND_TOPIC_PREFIX": "prod.", "RESCIND_KAFKA_TOPIC_PARTITIONS": "12", "RESCIND_KAFKA_TOPIC_REPLICATION_FACTOR": "3",
            "RESCIND_KAFKA_TOPIC_RETENTION_MS": "-1", "RESCIND_KAFKA_TOPIC_CLEANUP_POLICY": "delete, compact",
            "RESCIND_KAFKA_TOPIC_DEVICE_COMMANDS_PARTITIONS": "24", "RESCIND_KAFKA_TOPIC_DEVICE_COMMANDS_RETENTION_MS": "1209600000",
            "RESCIND_KAFKA_TOPICS_AUTO_CREATED": "true",
        ])
        let settings = try reader.kafkaTopics(names: Self.names)
        #expect(settings.prefix == "prod." && settings.autoCreated)
        let events = try #require(settings.topics.first { $0.name == "revocation_events" })
        #expect(events.partitions == 12 && events.replicationFactor == 3)
        #expect(events.configuration == ["retention.ms": "-1", "cleanup.policy": "compact,delete"])
        let commands = try #require(settings.topics.first { $0.name == "device_commands" })
        #expect(commands.partitions == 24 && commands.replicationFactor == 3 && commands.retentionMilliseconds == 1_209_600_000)
    }

    @Test func aWrongValueNamesItsVariable() throws {
        for (variable, value) in [
            ("RESCIND_KAFKA_TOPIC_PARTITIONS", "0"), ("RESCIND_KAFKA_TOPIC_REPLICATION_FACTOR", "many"),
            ("RESCIND_KAFKA_TOPIC_RETENTION_MS", "-2"), ("RESCIND_KAFKA_TOPIC_CLEANUP_POLICY", "forever"),
            ("RESCIND_KAFKA_TOPIC_DEVICE_COMMANDS_PARTITIONS", "x"),
        ] {
            var reader = EnvironmentReader([variable: value])
            let error = #expect(throws: ConfigurationError.self) { try reader.kafkaTopics(names: Self.names) }
            #expect(error?.variable == variable)
        }
    }
}
