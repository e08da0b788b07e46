import RescindMacros

/// A topic: one to create, or one as the cluster reports it (`KafkaAdmin.describeTopics`),
/// so that what exists compares field by field with what should (`TopicProvisioning.drift`).
@MemberwiseInit
public struct KafkaTopic: Sendable, Hashable {
    public var name: String
    /// Upper bound on consumer parallelism within one group; per-key order holds within a partition.
    public var partitions: Int32
    /// Copies of each partition; must not exceed the number of brokers. As reported: the
    /// smallest replica count over the topic's partitions.
    public var replicationFactor: Int16
    /// Topic-level configuration (`retention.ms`, `min.insync.replicas`, …). As reported: the
    /// entries the broker returned; empty when only metadata was asked for.
    public var configuration: [String: String] = [:]
}

/// What creating one topic did. Both outcomes count as success, so topic creation can
/// run on every start.
public enum KafkaTopicCreationOutcome: Sendable, Hashable {
    case created
    case alreadyExisted
}
