import Foundation
import Testing

@testable import RescindKafka
import RescindDevKit

@Suite("Consumer: commits, assignment, rebalance, close")
struct ConsumerTests {
    let cluster: DevelopmentCluster

    init() throws {
        cluster = try DevelopmentCluster(brokers: 3)
    }

    /// Produces `values` in order (one batch, so their partition order is the array order).
    func produce(_ values: [String], to topic: String, key: (Int) -> String = { _ in "key" }) async throws -> [KafkaDelivery] {
        let producer = try KafkaProducer(
            configuration: TestSupport.producerConfiguration(cluster.bootstrapServers), logger: TestSupport.logger
        )
        let messages = values.enumerated().map { index, value in
            KafkaProducerMessage(topic: topic, key: TestSupport.data(key(index)), value: TestSupport.data(value))
        }
        let results = await producer.send(messages)
        await producer.shutdown()
        return try results.map { try $0.get() }
    }

    func groupConsumer(_ topic: String, group: String) throws -> KafkaConsumer {
        try KafkaConsumer(
            configuration: TestSupport.consumerConfiguration(cluster.bootstrapServers, groupID: group),
            subscription: .group(topics: [topic]),
            logger: TestSupport.logger
        )
    }

    struct HandlerFailed: Error {}

    @Test("a restarted group continues after the last commit and redelivers a message whose handler failed")
    func commitAndRestartResumes() async throws {
        let topic = TestSupport.unique("commit")
        let group = TestSupport.unique("group")
        try await cluster.createTopic(name: topic, partitions: 1)
        _ = try await produce((0..<6).map { "m\($0)" }, to: topic)

        // First run: m0...m2 handled and committed, the handler fails on m3.
        let first = try groupConsumer(topic, group: group)
        let handled = Handled()
        await #expect(throws: HandlerFailed.self) {
            try await TestSupport.withDeadline(.seconds(20)) {
                try await first.run { message in
                    let value = TestSupport.text(message.value)!
                    if value == "m3" { throw HandlerFailed() }
                    handled.append(value)
                }
            }
        }
        await first.close()
        #expect(handled.values == ["m0", "m1", "m2"])

        // Second run in the same group: starts at the uncommitted m3, nothing committed comes back.
        let second = try groupConsumer(topic, group: group)
        let resumed = try await TestSupport.collect(3, from: second)
        #expect(resumed.map { TestSupport.text($0.value) } == ["m3", "m4", "m5"])
        #expect(resumed.first?.offset == 3)
        try await second.commit(resumed[0])
        await second.close()

        // Third run: an explicit commit of m3 alone moves the group to m4.
        let third = try groupConsumer(topic, group: group)
        let next = try await TestSupport.collect(1, from: third)
        #expect(next.map { TestSupport.text($0.value) } == ["m4"])
        await third.close()
    }

    @Test("manual assignment reads a partition from the given offset, without a group")
    func manualAssignmentFromOffset() async throws {
        let topic = TestSupport.unique("manual")
        try await cluster.createTopic(name: topic, partitions: 2)
        let deliveries = try await produce((0..<10).map { "m\($0)" }, to: topic)
        let partition = try #require(deliveries.first?.partition)
        #expect(Set(deliveries.map(\.partition)) == [partition])

        let consumer = try KafkaConsumer(
            configuration: TestSupport.consumerConfiguration(cluster.bootstrapServers),
            subscription: .partitions([KafkaPartitionAssignment(topic: topic, partition: partition, start: .offset(6))]),
            logger: TestSupport.logger
        )
        let received = try await TestSupport.collect(4, from: consumer)
        #expect(received.map(\.offset) == [6, 7, 8, 9])
        #expect(received.map { TestSupport.text($0.value) } == ["m6", "m7", "m8", "m9"])
        #expect(received.allSatisfy { $0.partition == partition && $0.topic == topic })
        await consumer.close()
    }

    @Test("two consumers of one group split the partitions and no message is lost")
    func rebalanceSplitsPartitions() async throws {
        let topic = TestSupport.unique("rebalance")
        let group = TestSupport.unique("group")
        try await cluster.createTopic(name: topic, partitions: 4)
        _ = try await produce((0..<40).map { "a\($0)" }, to: topic, key: { "k\($0)" })

        let handled = Handled()
        let first = try groupConsumer(topic, group: group)
        let firstRun = Task { try await first.run { handled.append("A", TestSupport.text($0.value)!) } }
        try await TestSupport.eventually { first.assignment.current.count == 4 }

        let second = try groupConsumer(topic, group: group)
        let secondRun = Task { try await second.run { handled.append("B", TestSupport.text($0.value)!) } }
        try await TestSupport.eventually {
            let (a, b) = (first.assignment.current, second.assignment.current)
            return !a.isEmpty && !b.isEmpty && a.isDisjoint(with: b) && a.union(b).count == 4
        }

        _ = try await produce((0..<40).map { "b\($0)" }, to: topic, key: { "k\($0)" })
        try await TestSupport.eventually { handled.distinct.count == 80 }
        #expect(handled.distinct == Set((0..<40).flatMap { ["a\($0)", "b\($0)"] }))
        // After the split, each consumer handled part of the second batch.
        #expect(handled.values(by: "A").contains { $0.hasPrefix("b") })
        #expect(handled.values(by: "B").contains { $0.hasPrefix("b") })

        await first.close()
        await second.close()
        try await firstRun.value
        try await secondRun.value
    }

    @Test("close ends the message sequence and later commits fail")
    func closeEndsSequence() async throws {
        let topic = TestSupport.unique("close")
        try await cluster.createTopic(name: topic, partitions: 1)
        _ = try await produce(["only"], to: topic)
        let consumer = try KafkaConsumer(
            configuration: TestSupport.consumerConfiguration(cluster.bootstrapServers, groupID: TestSupport.unique("group")),
            subscription: .partitions([KafkaPartitionAssignment(topic: topic, partition: 0, start: .beginning)]),
            logger: TestSupport.logger
        )
        let seen = Handled()
        let reader = Task {
            for try await message in consumer.messages { seen.append(TestSupport.text(message.value)!) }
        }
        try await TestSupport.eventually { seen.values == ["only"] }
        await consumer.close()
        try await TestSupport.withDeadline(.seconds(5)) { try await reader.value }
        #expect(seen.values == ["only"])
        let late = KafkaMessage(topic: topic, partition: 0, offset: 0, key: nil, value: nil)
        await #expect(throws: KafkaError.self) { try await consumer.commit(late) }
        await consumer.close()  // a second close is a no-op
    }
}

/// Values handled by consumers, thread-safe (handlers run on several tasks).
final class Handled: @unchecked Sendable {
    // Safe: `entries` is only accessed while holding `lock`.
    private let lock = NSLock()
    private var entries: [(consumer: String, value: String)] = []

    func append(_ value: String) { append("", value) }

    func append(_ consumer: String, _ value: String) {
        lock.withLock { entries.append((consumer, value)) }
    }

    var values: [String] { lock.withLock { entries.map(\.value) } }
    var distinct: Set<String> { Set(values) }

    func values(by consumer: String) -> [String] {
        lock.withLock { entries.filter { $0.consumer == consumer }.map(\.value) }
    }
}
