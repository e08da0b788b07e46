import Foundation
import Testing

@_spi(DevKit) @testable import RescindKafka
import RescindDevKit

/// The benchmark's raw producer loop must really deliver: every message acknowledged and
/// readable. Not a timing test.
@Suite("Raw librdkafka producer baseline")
struct RawProducerBaselineTests {
    @Test func everyMessageIsAcknowledgedAndReadable() async throws {
        let cluster = try DevelopmentCluster()
        let topic = TestSupport.unique("raw-baseline")
        try await cluster.createTopic(name: topic, partitions: 2)
        let value = TestSupport.data("baseline payload")
        let bootstrapServers = cluster.bootstrapServers
        // The loop blocks its thread, so it runs on its own, off Swift's cooperative pool.
        let outcome = try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result {
                    try RawProducerBaseline.produce(
                        count: 200, topic: topic, key: TestSupport.data("key"), value: value,
                        configuration: TestSupport.producerConfiguration(bootstrapServers))
                })
            }
        }
        #expect(outcome.acknowledged == 200)

        let consumer = try KafkaConsumer(
            configuration: TestSupport.consumerConfiguration(bootstrapServers),
            subscription: .partitions((0..<2).map { KafkaPartitionAssignment(topic: topic, partition: $0, start: .beginning) }),
            logger: TestSupport.logger)
        // The untimed warm-up message comes first.
        let received = try await TestSupport.collect(201, from: consumer)
        await consumer.close()
        #expect(received.count == 201)
        #expect(received.allSatisfy { $0.value == value })
    }
}
