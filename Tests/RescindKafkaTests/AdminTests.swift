import Foundation
import Testing

@testable import RescindKafka
import RescindDevKit

@Suite("Topic creation")
struct AdminTests {
    @Test("the development cluster creates topics idempotently and refuses impossible ones")
    func developmentClusterCreatesTopics() async throws {
        let cluster = try DevelopmentCluster(brokers: 2)
        let specs = RescindTopics.specs(partitions: 3, replicationFactor: 2)
        #expect(try await cluster.createTopics(specs) == Dictionary(uniqueKeysWithValues: RescindTopics.all.map { ($0, .created) }))
        #expect(try await cluster.createTopics(specs).values.allSatisfy { $0 == .alreadyExisted })
        await #expect(throws: KafkaError.self) { try await cluster.createTopic(name: "too-many-replicas", partitions: 1, replicationFactor: 3) }

        cluster.shutdown()
        let error = await #expect(throws: KafkaError.self) { try await cluster.createTopic(name: "after-shutdown", partitions: 1) }
        #expect(error?.code == .developmentCluster)
    }

    /// librdkafka 2.0.2's mock broker has no Admin API: CreateTopics waits for a
    /// controller the mock never provides and ends in `_TIMED_OUT`. This pins that
    /// behaviour, which is why the dev broker creates topics through the mock API.
    @Test("CreateTopics against the 2.0.2 mock broker times out waiting for a controller")
    func createTopicsOnMockTimesOut() async throws {
        let cluster = try DevelopmentCluster(brokers: 1)
        let admin = try KafkaAdmin(bootstrapServers: cluster.bootstrapServers, logger: TestSupport.logger)
        let error = await #expect(throws: KafkaError.self) {
            try await admin.createTopics([KafkaTopic(name: TestSupport.unique("admin"), partitions: 1, replicationFactor: 1)], timeout: .seconds(1))
        }
        #expect(error?.code == .admin)
        #expect(error?.rdKafkaName == "_TIMED_OUT")
    }
}
