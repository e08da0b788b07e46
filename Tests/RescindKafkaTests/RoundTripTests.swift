import Foundation
import Testing

@testable import RescindKafka
import RescindDevKit

@Suite("Produce → consume round trip")
struct RoundTripTests {
    @Test("key, value and headers arrive intact on the development cluster")
    func roundTripOnDevelopmentCluster() async throws {
        let cluster = try DevelopmentCluster(brokers: 3)
        let topic = TestSupport.unique("round-trip")
        try await cluster.createTopic(name: topic, partitions: 3, replicationFactor: 3)
        try await Self.roundTrip(bootstrapServers: cluster.bootstrapServers, topic: topic)
    }

    /// The external broker may be a real Kafka (topic created through the Admin API,
    /// then found existing) or the dev stack's `rescind-devbroker`, whose librdkafka
    /// 2.0.2 mock has no Admin API (`_TIMED_OUT`); the topic is then created on first use.
    @Test(
        "key, value and headers arrive intact on the external broker",
        .enabled(if: TestSupport.externalBootstrapServers != nil, "set RESCIND_KAFKA_BOOTSTRAP_SERVERS to run")
    )
    func roundTripOnExternalBroker() async throws {
        let bootstrapServers = try #require(TestSupport.externalBootstrapServers)
        let topic = TestSupport.unique("round-trip")
        let admin = try KafkaAdmin(bootstrapServers: bootstrapServers, logger: TestSupport.logger)
        let spec = KafkaTopic(name: topic, partitions: 3, replicationFactor: 1)
        do {
            #expect(try await admin.createTopics([spec], timeout: .seconds(3)) == [topic: .created])
            #expect(try await admin.createTopics([spec], timeout: .seconds(3)) == [topic: .alreadyExisted])
        } catch let error as KafkaError where error.rdKafkaName == "_TIMED_OUT" {
            // A broker without a controller answering CreateTopics: the mock.
        }
        try await Self.roundTrip(bootstrapServers: bootstrapServers, topic: topic)
    }

    static func roundTrip(bootstrapServers: String, topic: String) async throws {
        let producer = try KafkaProducer(
            configuration: TestSupport.producerConfiguration(bootstrapServers), logger: TestSupport.logger
        )
        let headers = [
            KafkaHeader(key: "schema", value: TestSupport.data("revocation_event/1")),
            KafkaHeader(key: "trace", value: nil),
            KafkaHeader(key: "schema", value: Data()),
            KafkaHeader(key: "binary", value: Data([0, 255, 1, 254])),
        ]
        var sent: [String: KafkaDelivery] = [:]
        for index in 0..<3 {
            let key = "family-member-\(index)"
            sent[key] = try await producer.send(
                topic: topic, key: TestSupport.data(key), value: TestSupport.data("payload \(index)"), headers: headers
            )
        }
        let tombstone = try await producer.send(topic: topic, key: TestSupport.data("deleted"), value: nil)
        await producer.shutdown()

        let consumer = try KafkaConsumer(
            configuration: TestSupport.consumerConfiguration(bootstrapServers, groupID: TestSupport.unique("group")),
            subscription: .group(topics: [topic]),
            logger: TestSupport.logger
        )
        let received = try await TestSupport.collect(4, from: consumer)
        await consumer.close()

        for message in received where message.value != nil {
            let key = try #require(TestSupport.text(message.key))
            let delivery = try #require(sent[key])
            #expect(message.topic == topic)
            #expect(message.partition == delivery.partition)
            #expect(message.offset == delivery.offset)
            #expect(TestSupport.text(message.value) == "payload \(key.split(separator: "-").last!)")
            #expect(message.headers == headers)
            #expect(message.timestamp.map { abs($0.timeIntervalSinceNow) < 60 } == true)
        }
        let deleted = try #require(received.first { TestSupport.text($0.key) == "deleted" })
        #expect(deleted.value == nil)
        #expect(deleted.headers.isEmpty)
        #expect(deleted.offset == tombstone.offset)
        #expect(Set(received.compactMap { TestSupport.text($0.key) }) == Set(sent.keys).union(["deleted"]))
    }
}
