/// A topic as the cluster reports it.
public struct KafkaTopicDescription: Sendable, Hashable {
    public var name: String
    public var partitions: Int32
    /// The smallest replica count over the topic's partitions.
    public var replicationFactor: Int16
    /// The topic's configuration entries the broker reported (`retention.ms`,
    /// `cleanup.policy`, …); empty when only metadata was asked for.
    public var configuration: [String: String]

    public init(name: String, partitions: Int32, replicationFactor: Int16, configuration: [String: String] = [:]) {
        self.name = name
        self.partitions = partitions
        self.replicationFactor = replicationFactor
        self.configuration = configuration
    }
}
