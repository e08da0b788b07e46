import Foundation
import Testing

@testable import RescindKafka
import RescindDevKit

@Suite("Producer under injected faults")
struct ProducerFaultTests {
    let cluster: DevelopmentCluster

    init() throws {
        cluster = try DevelopmentCluster(brokers: 1)
    }

    func producer(messageTimeout: Duration = .seconds(20)) throws -> KafkaProducer {
        try KafkaProducer(
            configuration: TestSupport.producerConfiguration(cluster.bootstrapServers, messageTimeout: messageTimeout),
            logger: TestSupport.logger
        )
    }

    @Test("a message the broker never acknowledges fails with _MSG_TIMED_OUT; the producer recovers")
    func deliveryTimesOutWhileBrokerDown() async throws {
        let topic = TestSupport.unique("timeout")
        try await cluster.createTopic(name: topic, partitions: 1)
        let producer = try producer(messageTimeout: .milliseconds(1500))
        _ = try await producer.send(topic: topic, key: nil, value: TestSupport.data("warm-up"))

        try await cluster.setBrokerDown(1)
        let error = await #expect(throws: KafkaError.self) {
            try await producer.send(topic: topic, key: nil, value: TestSupport.data("lost"))
        }
        #expect(error?.code == .delivery)
        #expect(error?.rdKafkaName == "_MSG_TIMED_OUT")
        #expect(error?.description.contains("lost") == false)

        try await cluster.setBrokerUp(1)
        let delivery = try await producer.send(topic: topic, key: nil, value: TestSupport.data("after"))
        #expect(delivery.offset == 1)
        await producer.shutdown()
    }

    @Test("a permanent broker error on produce surfaces with its code")
    func permanentProduceError() async throws {
        let topic = TestSupport.unique("denied")
        try await cluster.createTopic(name: topic, partitions: 1)
        let producer = try producer()
        _ = try await producer.send(topic: topic, key: nil, value: TestSupport.data("warm-up"))

        try await cluster.pushRequestErrors([.topicAuthorizationFailed], for: .produce)
        let error = await #expect(throws: KafkaError.self) {
            try await producer.send(topic: topic, key: nil, value: TestSupport.data("denied"))
        }
        #expect(error?.code == .delivery)
        #expect(error?.rdKafkaName == "TOPIC_AUTHORIZATION_FAILED")
        #expect(error?.rdKafkaCode == 29)
        await producer.shutdown()
    }

    @Test("messages sent while the broker goes down and up arrive once each, in order")
    func brokerDownThenUpLosesNothing() async throws {
        let topic = TestSupport.unique("outage")
        try await cluster.createTopic(name: topic, partitions: 2)
        let producer = try producer()
        _ = try await producer.send(topic: topic, key: TestSupport.data("k0"), value: TestSupport.data("warm-up"))

        let count = 300
        let messages = (0..<count).map { index in
            KafkaProducerMessage(topic: topic, key: TestSupport.data("k\(index % 6)"), value: TestSupport.data("\(index)"))
        }
        let sending = Task { await producer.send(messages) }
        try await Task.sleep(for: .milliseconds(5))
        try await cluster.setBrokerDown(1)
        try await Task.sleep(for: .milliseconds(1500))
        try await cluster.setBrokerUp(1)
        let deliveries = try await sending.value.map { try $0.get() }
        await producer.shutdown()
        #expect(deliveries.count == count)

        let consumer = try KafkaConsumer(
            configuration: TestSupport.consumerConfiguration(cluster.bootstrapServers),
            subscription: .partitions((0..<2).map { KafkaPartitionAssignment(topic: topic, partition: $0, start: .beginning) }),
            logger: TestSupport.logger
        )
        let received = try await TestSupport.collect(count + 1, from: consumer).filter { $0.value != TestSupport.data("warm-up") }
        await consumer.close()

        let values = received.compactMap { TestSupport.text($0.value).flatMap(Int.init) }
        #expect(values.count == count)
        #expect(Set(values) == Set(0..<count))
        // Per key (hence per partition), the broker holds the messages in send order.
        for key in 0..<6 {
            let ofKey = received.filter { TestSupport.text($0.key) == "k\(key)" }.compactMap { TestSupport.text($0.value).flatMap(Int.init) }
            #expect(ofKey == ofKey.sorted())
        }
        // The delivery reports agree with what was stored.
        let stored = Dictionary(uniqueKeysWithValues: received.map { (TestSupport.text($0.value)!, ($0.partition, $0.offset)) })
        for (index, delivery) in deliveries.enumerated() {
            #expect(stored["\(index)"].map { $0 == (delivery.partition, delivery.offset) } == true)
        }
    }
}
