import CRdKafka

extension DevelopmentCluster {
    /// Closes the broker's connections and refuses new ones until `setBrokerUp`.
    /// Partitions it leads become unavailable (the mock does not elect a new leader;
    /// use `setPartitionLeader`).
    public func setBrokerDown(_ brokerID: Int32) async throws {
        try check(try await withCluster { rd_kafka_mock_broker_set_down($0, brokerID) }, "setting broker \(brokerID) down")
    }

    /// Accepts connections on the broker again.
    public func setBrokerUp(_ brokerID: Int32) async throws {
        try check(try await withCluster { rd_kafka_mock_broker_set_up($0, brokerID) }, "setting broker \(brokerID) up")
    }

    /// Moves a partition's leadership (clients learn it through their next metadata refresh).
    public func setPartitionLeader(topic: String, partition: Int32, brokerID: Int32) async throws {
        try check(
            try await withCluster { rd_kafka_mock_partition_set_leader($0, topic, partition, brokerID) },
            "moving the leader of \(topic)[\(partition)]"
        )
    }

    /// Makes the next `errors.count` requests of type `api` (on any broker) fail with
    /// these errors, in order, then requests succeed again.
    public func pushRequestErrors(_ errors: [InjectedError], for api: APIKey) async throws {
        let codes = errors.map(\.rawValue)
        try await withCluster { cluster in
            codes.map { rd_kafka_resp_err_t(rawValue: $0) }.withUnsafeBufferPointer { buffer in
                rd_kafka_mock_push_request_errors_array(cluster, api.rawValue, buffer.count, buffer.baseAddress)
            }
        }
    }

    /// Drops injected errors not yet consumed for `api`.
    public func clearRequestErrors(for api: APIKey) async throws {
        try await withCluster { rd_kafka_mock_clear_request_errors($0, api.rawValue) }
    }
}
