import CRdKafka

/// Owns one librdkafka mock cluster (`rd_kafka_mock_cluster_t`) and the client handle hosting it;
/// destroys the cluster in `deinit`, before the host is released. `DevelopmentCluster` serialises
/// every call and its destruction.
final class RDKafkaMockCluster {
    private let host: RDKafkaHandle
    private let pointer: OpaquePointer

    /// - Throws: `KafkaError` `.developmentCluster` when librdkafka cannot start the mock (no free port, …).
    init(brokers: Int) throws {
        // The mock is hosted by a client handle of its own; it only needs to stay quiet.
        let host = try RDKafkaHandle(kind: .producer, properties: ["log_level": "3"], events: [], logsOnMainQueue: false)
        guard let cluster = host.withPointer({ rd_kafka_mock_cluster_new($0, Int32(brokers)) }) else {
            throw KafkaError(code: .developmentCluster, detail: "rd_kafka_mock_cluster_new failed")
        }
        self.host = host
        pointer = cluster
    }

    deinit {
        rd_kafka_mock_cluster_destroy(pointer)
    }

    /// Comma-separated `127.0.0.1:port` list, one per broker.
    var bootstrapServers: String { String(cString: rd_kafka_mock_cluster_bootstraps(pointer)) }

    func setBrokerDown(_ brokerID: Int32) -> RDKafkaCode {
        RDKafkaCode(rd_kafka_mock_broker_set_down(pointer, brokerID))
    }

    func setBrokerUp(_ brokerID: Int32) -> RDKafkaCode {
        RDKafkaCode(rd_kafka_mock_broker_set_up(pointer, brokerID))
    }

    func setPartitionLeader(topic: String, partition: Int32, brokerID: Int32) -> RDKafkaCode {
        RDKafkaCode(rd_kafka_mock_partition_set_leader(pointer, topic, partition, brokerID))
    }

    /// Makes the next requests of protocol type `apiKey` fail with `codes` (Kafka protocol error numbers), in order.
    func pushRequestErrors(_ codes: [Int32], apiKey: Int16) {
        codes.map { rd_kafka_resp_err_t(rawValue: $0) }.withUnsafeBufferPointer { buffer in
            rd_kafka_mock_push_request_errors_array(pointer, apiKey, buffer.count, buffer.baseAddress)
        }
    }

    func clearRequestErrors(apiKey: Int16) {
        rd_kafka_mock_clear_request_errors(pointer, apiKey)
    }

    func createTopic(name: String, partitions: Int32, replicationFactor: Int32) -> RDKafkaCode {
        RDKafkaCode(rd_kafka_mock_topic_create(pointer, name, partitions, replicationFactor))
    }
}
