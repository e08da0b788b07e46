@_spi(DevKit) import RescindKafka

extension DevelopmentCluster {
    /// Closes the broker's connections and refuses new ones until `setBrokerUp`.
    /// Partitions it leads become unavailable (the mock does not elect a new leader;
    /// use `setPartitionLeader`).
    public func setBrokerDown(_ brokerID: Int32) async throws {
        try await withMock { try $0.setBrokerDown(brokerID) }
    }

    /// Accepts connections on the broker again.
    public func setBrokerUp(_ brokerID: Int32) async throws {
        try await withMock { try $0.setBrokerUp(brokerID) }
    }

    /// Moves a partition's leadership (clients learn it through their next metadata refresh).
    public func setPartitionLeader(topic: String, partition: Int32, brokerID: Int32) async throws {
        try await withMock { try $0.setPartitionLeader(topic: topic, partition: partition, brokerID: brokerID) }
    }

    /// Makes `brokerID` the coordinator of consumer group `group`. By default the mock picks one
    /// broker per group by hashing its id and keeps it even while that broker is down; moving it
    /// is what a controller does when the coordinator's broker dies. Members learn it from their
    /// next group request (`NOT_COORDINATOR`, then a new FindCoordinator).
    public func setGroupCoordinator(group: String, brokerID: Int32) async throws {
        try await withMock { try $0.setGroupCoordinator(group: group, brokerID: brokerID) }
    }

    /// Makes the next `errors.count` requests of type `api` (on any broker) fail with
    /// these errors, in order, then requests succeed again.
    public func pushRequestErrors(_ errors: [InjectedError], for api: APIKey) async throws {
        let codes = errors.map(\.rawValue)
        try await withMock { try $0.pushRequestErrors(codes, apiKey: api.rawValue) }
    }

    /// Drops injected errors not yet consumed for `api`.
    public func clearRequestErrors(for api: APIKey) async throws {
        try await withMock { try $0.clearRequestErrors(apiKey: api.rawValue) }
    }
}
