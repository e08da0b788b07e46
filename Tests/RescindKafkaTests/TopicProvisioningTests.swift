import Foundation
import Testing

@testable import RescindKafka
import RescindDevKit

/// Topics provisioned like a schema: created with their spec, verified, drift
/// reported. The Admin API parts need a broker that has one (Tansu, Apache Kafka): the
/// development broker (librdkafka 2.0.2's mock) has no CreateTopics or DescribeConfigs.
@Suite("Topic provisioning", .serialized)
struct TopicProvisioningTests {
    /// A broker with an Admin API: `RESCIND_KAFKA_BOOTSTRAP_SERVERS`, unless the environment says
    /// the broker creates topics on first use (`RESCIND_KAFKA_TOPICS_AUTO_CREATED=true`, the mock).
    static var adminBroker: String? {
        let environment = ProcessInfo.processInfo.environment
        guard ["1", "true", "yes", "on"].contains(environment["RESCIND_KAFKA_TOPICS_AUTO_CREATED"]?.lowercased() ?? "") == false
        else { return nil }
        return TestSupport.externalBootstrapServers
    }

    static func specs(prefix: String, partitions: Int32 = 2, retention: String = "3600000") -> [KafkaTopic] {
        RescindTopics.all.map {
            KafkaTopic(
                name: prefix + $0, partitions: partitions, replicationFactor: 1,
                configuration: ["retention.ms": retention, "cleanup.policy": "delete"])
        }
    }

    @Test("drift: fewer partitions, fewer replicas and other configuration are reported; more partitions are not")
    func driftRules() {
        let spec = KafkaTopic(
            name: "device_commands", partitions: 4, replicationFactor: 3,
            configuration: ["retention.ms": "604800000", "cleanup.policy": "delete"])
        let matching = KafkaTopic(
            name: "device_commands", partitions: 6, replicationFactor: 3,
            configuration: ["retention.ms": "604800000", "cleanup.policy": "delete", "segment.ms": "1"])
        #expect(TopicProvisioning.drift(of: spec, in: matching).isEmpty)

        let drifted = KafkaTopic(
            name: "device_commands", partitions: 2, replicationFactor: 1, configuration: ["retention.ms": "86400000"])
        let drift = TopicProvisioning.drift(of: spec, in: drifted)
        #expect(drift.map(\.kind) == [
            .tooFewPartitions(expected: 4, actual: 2),
            .replicationFactorTooLow(expected: 3, actual: 1),
            .configuration(key: "cleanup.policy", expected: "delete", actual: nil),
            .configuration(key: "retention.ms", expected: "604800000", actual: "86400000"),
        ])
        #expect(drift[0].description.contains("device_commands: 2 partitions, configured 4"))
    }

    @Test("a service's topic watch is not ready until its topics exist (development cluster metadata)")
    func topicWatchOnDevelopmentCluster() async throws {
        let cluster = try DevelopmentCluster(brokers: 1)
        let prefix = TestSupport.unique("watch") + "."
        let names = RescindTopics.all.map { prefix + $0 }
        let watch = KafkaTopicWatch(
            admin: try KafkaAdmin(bootstrapServers: cluster.bootstrapServers, logger: TestSupport.logger), topics: names)
        let reason = try #require(await watch.notReadyReason())
        #expect(reason.contains("Kafka topics missing") && reason.contains(prefix + "device_commands"))
        _ = try await cluster.createTopics(Self.specs(prefix: prefix))
        #expect(await watch.notReadyReason() == nil)
    }

    @Test(
        "creates the five topics, verifies them on a second run, and reports drift",
        .enabled(if: TopicProvisioningTests.adminBroker != nil, "needs a broker with an Admin API (scripts/test.sh's Tansu pass)"),
        .timeLimit(.minutes(2)))
    func provisionsOnARealBroker() async throws {
        let admin = try KafkaAdmin(bootstrapServers: try #require(Self.adminBroker), logger: TestSupport.logger)
        let prefix = TestSupport.unique("provision") + "."
        let names = RescindTopics.all.map { prefix + $0 }

        let first = try await TopicProvisioning(topics: Self.specs(prefix: prefix)).run(with: admin)
        #expect(Set(first.created) == Set(names) && first.isClean, "\(first)")

        let described = try await admin.describeTopics(names)
        #expect(described[prefix + "device_commands"]?.partitions == 2)
        #expect(described[prefix + "device_commands"]?.configuration["retention.ms"] == "3600000")

        let second = try await TopicProvisioning(topics: Self.specs(prefix: prefix)).run(with: admin)
        #expect(second.created.isEmpty && Set(second.verified) == Set(names) && second.isClean, "\(second)")

        // The configuration now asks for more partitions and a longer retention: nothing is
        // changed, and every difference is reported.
        let drifted = try await TopicProvisioning(topics: Self.specs(prefix: prefix, partitions: 4, retention: "7200000")).run(with: admin)
        #expect(drifted.created.isEmpty && !drifted.isClean)
        #expect(drifted.drift.contains { $0.kind == .tooFewPartitions(expected: 4, actual: 2) })
        #expect(drifted.drift.contains { $0.kind == .configuration(key: "retention.ms", expected: "7200000", actual: "3600000") })

        // Verify only: a missing topic is reported, not created.
        let other = TestSupport.unique("absent") + "."
        let verifyOnly = try await TopicProvisioning(topics: Self.specs(prefix: other)).run(with: admin, createMissing: false)
        #expect(verifyOnly.missing.count == 5 && verifyOnly.created.isEmpty)
        #expect(try await admin.existingTopics(RescindTopics.all.map { other + $0 }).isEmpty)
    }

    @Test(
        "a group consumer subscribed before its topic existed receives from it within seconds of its creation",
        .enabled(if: TopicProvisioningTests.adminBroker != nil, "needs a broker with an Admin API (scripts/test.sh's Tansu pass)"),
        .timeLimit(.minutes(2)))
    func consumerPicksUpATopicCreatedLater() async throws {
        let bootstrap = try #require(Self.adminBroker)
        let topic = TestSupport.unique("late-topic")
        // The product's defaults (no test overrides of the metadata refresh).
        let consumer = try KafkaConsumer(
            configuration: KafkaConsumerConfiguration(
                bootstrapServers: bootstrap, clientID: "rescind-tests", groupID: TestSupport.unique("late-group"),
                sessionTimeout: .seconds(6), heartbeatInterval: .milliseconds(500)),
            subscription: .group(topics: [topic]), logger: TestSupport.logger)
        try await Task.sleep(for: .seconds(2))
        let admin = try KafkaAdmin(bootstrapServers: bootstrap, logger: TestSupport.logger)
        #expect(try await admin.createTopics([KafkaTopic(name: topic, partitions: 1, replicationFactor: 1)]) == [topic: .created])
        let created = ContinuousClock.now
        let producer = try KafkaProducer(configuration: TestSupport.producerConfiguration(bootstrap), logger: TestSupport.logger)
        _ = try await producer.send(topic: topic, key: TestSupport.data("k"), value: TestSupport.data("after creation"))
        await producer.shutdown()
        let received = try await TestSupport.collect(1, from: consumer, timeout: .seconds(30))
        #expect(TestSupport.text(received.first?.value) == "after creation")
        #expect(ContinuousClock.now - created < .seconds(20))
        await consumer.close()
    }
}
