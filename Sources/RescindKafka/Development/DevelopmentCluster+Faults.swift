extension DevelopmentCluster {
    /// Closes the broker's connections and refuses new ones until `setBrokerUp`.
    /// Partitions it leads become unavailable (the mock does not elect a new leader;
    /// use `setPartitionLeader`).
    public func setBrokerDown(_ brokerID: Int32) async throws {
        try check(try await withCluster { $0.setBrokerDown(brokerID) }, "setting broker \(brokerID) down")
    }

    /// Accepts connections on the broker again.
    public func setBrokerUp(_ brokerID: Int32) async throws {
        try check(try await withCluster { $0.setBrokerUp(brokerID) }, "setting broker \(brokerID) up")
    }

    /// Moves a partition's leadership (clients learn it through their next metadata refresh).
    public func setPartitionLeader(topic: String, partition: Int32, brokerID: Int32) async throws {
        try check(
            try await withCluster { $0.setPartitionLeader(topic: topic, partition: partition, brokerID: brokerID) },
            "moving the leader of \(topic)[\(partition)]"
        )
    }

    /// Makes the next `errors.count` requests of type `api` (on any broker) fail with
    /// these errors, in order, then requests succeed again.
    public func pushRequestErrors(_ errors: [InjectedError], for api: APIKey) async throws {
        let codes = errors.map(\.rawValue)
        try await withCluster { $0.pushRequestErrors(codes, apiKey: api.rawValue) }
    }

    /// Drops injected errors not yet consumed for `api`.
    public func clearRequestErrors(for api: APIKey) async throws {
        try await withCluster { $0.clearRequestErrors(apiKey: api.rawValue) }
    }
}
