extension DevelopmentCluster {
    /// Kafka protocol request types that faults can be injected into.
    public enum APIKey: Int16, Sendable, CaseIterable {
        case produce = 0
        case fetch = 1
        case listOffsets = 2
        case metadata = 3
        case offsetCommit = 8
        case offsetFetch = 9
        case findCoordinator = 10
        case joinGroup = 11
        case heartbeat = 12
        case leaveGroup = 13
        case syncGroup = 14
        case apiVersions = 18
        case initProducerID = 22
    }

    /// Kafka protocol error codes a mock broker can answer with (raw values are the
    /// protocol's numbers, also librdkafka's `rd_kafka_resp_err_t`).
    public enum InjectedError: Int32, Sendable, CaseIterable {
        /// Retriable: the client retries (within its message timeout).
        case corruptMessage = 2
        case unknownTopicOrPartition = 3
        /// Retriable.
        case leaderNotAvailable = 5
        /// Retriable: the client refreshes metadata and retries.
        case notLeaderForPartition = 6
        /// Retriable.
        case requestTimedOut = 7
        /// Permanent for the message.
        case messageTooLarge = 10
        case coordinatorNotAvailable = 15
        case notCoordinator = 16
        /// Retriable.
        case notEnoughReplicas = 19
        case rebalanceInProgress = 27
        /// Permanent: the message fails with this code.
        case topicAuthorizationFailed = 29
        case groupAuthorizationFailed = 30
    }
}
