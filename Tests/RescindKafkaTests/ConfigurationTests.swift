import Testing

@testable import RescindKafka

@Suite("Client configuration")
struct ConfigurationTests {
    @Test("producer guarantees cannot be switched off through the escape hatch")
    func producerGuarantees() {
        let configuration = KafkaProducerConfiguration(
            bootstrapServers: "broker-1:9092,broker-2:9092",
            linger: .milliseconds(7),
            messageTimeout: .seconds(2),
            additionalProperties: ["enable.idempotence": "false", "acks": "1", "compression.type": "zstd", "linger.ms": "9"]
        )
        let properties = configuration.properties
        #expect(properties["bootstrap.servers"] == "broker-1:9092,broker-2:9092")
        #expect(properties["enable.idempotence"] == "true")
        #expect(properties["acks"] == "all")
        #expect(properties["compression.type"] == "zstd")
        #expect(properties["linger.ms"] == "9")
        #expect(properties["message.timeout.ms"] == "2000")
    }

    @Test("consumer never commits by itself, whatever the escape hatch says")
    func consumerCommitsOnlyExplicitly() {
        let configuration = KafkaConsumerConfiguration(
            bootstrapServers: "broker:9092", groupID: "audit",
            additionalProperties: ["enable.auto.commit": "true", "enable.auto.offset.store": "true"]
        )
        let properties = configuration.properties
        #expect(properties["enable.auto.commit"] == "false")
        #expect(properties["enable.auto.offset.store"] == "false")
        #expect(properties["group.id"] == "audit")
        #expect(properties["auto.offset.reset"] == "earliest")
    }

    @Test("a consumer without a group gets a private one, distinct per consumer")
    func consumerWithoutGroup() {
        let configuration = KafkaConsumerConfiguration(bootstrapServers: "broker:9092")
        #expect(configuration.properties["group.id"] != configuration.properties["group.id"])
    }

    @Test("durations become whole milliseconds within librdkafka's range")
    func durations() {
        #expect(Duration.milliseconds(1500).clampedMilliseconds == 1500)
        #expect(Duration.microseconds(2500).clampedMilliseconds == 2)
        #expect(Duration.seconds(-1).clampedMilliseconds == 0)
        #expect(Duration.seconds(10_000_000).clampedMilliseconds == Int32.max)
    }

    @Test("an unknown or invalid property is reported by name without echoing its value")
    func rejectedProperty() {
        let unknown = #expect(throws: KafkaError.self) {
            _ = try KafkaProducer(
                configuration: KafkaProducerConfiguration(bootstrapServers: "127.0.0.1:1", additionalProperties: ["no.such.property": "x"]),
                logger: TestSupport.logger
            )
        }
        #expect(unknown?.code == .configuration)
        let invalid = #expect(throws: KafkaError.self) {
            _ = try KafkaConsumer(
                configuration: KafkaConsumerConfiguration(bootstrapServers: "127.0.0.1:1", additionalProperties: ["fetch.wait.max.ms": "secret-looking-value"]),
                subscription: .partitions([]),
                logger: TestSupport.logger
            )
        }
        #expect(invalid?.description.contains("fetch.wait.max.ms") == true)
        #expect(invalid?.description.contains("secret-looking-value") == false)
    }

    @Test("subscribing to a group needs a group id")
    func groupNeedsID() {
        let error = #expect(throws: KafkaError.self) {
            _ = try KafkaConsumer(
                configuration: KafkaConsumerConfiguration(bootstrapServers: "127.0.0.1:1"),
                subscription: .group(topics: ["t"]),
                logger: TestSupport.logger
            )
        }
        #expect(error?.code == .subscription)
    }
}
