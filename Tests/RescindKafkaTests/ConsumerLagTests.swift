import Foundation
import Testing

@testable import RescindKafka
import RescindDevKit

/// A consumer's lag in messages, from the group's committed offsets and the partitions' high
/// watermarks, asked from a real broker.
@Suite("Consumer lag: committed offsets against high watermarks")
struct ConsumerLagTests {
    @Test("messages produced and not committed are the lag; a commit takes them off; a broker down is an error")
    func lagCountsWhatIsNotCommitted() async throws {
        let cluster = try DevelopmentCluster(brokers: 1)
        let topic = TestSupport.unique("lag")
        try await cluster.createTopic(name: topic, partitions: 2)
        let consumer = try KafkaConsumer(
            configuration: TestSupport.consumerConfiguration(cluster.bootstrapServers, groupID: TestSupport.unique("group")),
            subscription: .group(topics: [topic]), logger: TestSupport.logger)

        // Before its assignment the consumer has no partition: an empty answer, the brokers answered.
        #expect(try await consumer.lag().allSatisfy { $0.messages == 0 })

        let producer = try KafkaProducer(
            configuration: TestSupport.producerConfiguration(cluster.bootstrapServers), logger: TestSupport.logger)
        let results = await producer.send((0..<7).map { index in
            KafkaProducerMessage(topic: topic, key: TestSupport.data("k\(index)"), value: TestSupport.data("m\(index)"))
        })
        await producer.shutdown()
        for result in results { _ = try result.get() }

        // Seven messages fetched (perhaps) but none committed: seven behind, over both partitions.
        let first = try await TestSupport.collect(1, from: consumer)[0]
        var lag: [KafkaPartitionLag] = []
        let deadline = ContinuousClock.now + .seconds(20)
        repeat {
            lag = try await consumer.lag()
        } while lag.count < 2 && ContinuousClock.now < deadline
        #expect(lag.map(\.partition).sorted() == [0, 1])
        #expect(lag.reduce(0) { $0 + $1.messages } == 7)
        #expect(lag.allSatisfy { $0.committedOffset == nil })

        try await consumer.commit(first)
        let after = try await consumer.lag()
        #expect(after.reduce(0) { $0 + $1.messages } == 7 - (first.offset + 1))
        #expect(after.first { $0.partition == first.partition }?.committedOffset == first.offset + 1)

        // What `rescind_broker_up` reads: no answer within the timeout is an error, not a stale figure.
        let broker = cluster.brokerIDs.lowerBound
        try await cluster.setBrokerDown(broker)
        await #expect(throws: KafkaError.self) { _ = try await consumer.lag(timeout: .seconds(1)) }
        try await cluster.setBrokerUp(broker)
        await consumer.close()
        await #expect(throws: KafkaError.self) { _ = try await consumer.lag() }
    }
}
