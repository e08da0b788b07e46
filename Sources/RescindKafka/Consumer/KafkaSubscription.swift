import RescindMacros

/// How a consumer gets its partitions.
public enum KafkaSubscription: Sendable, Hashable {
    /// Join the configured consumer group on these topics; the group coordinator
    /// spreads their partitions over the members and rebalances as members come and go.
    case group(topics: [String])
    /// Read exactly these partitions, from the given offsets, with no group membership.
    case partitions([KafkaPartitionAssignment])
}

/// One partition read by a manually assigned consumer.
@MemberwiseInit
public struct KafkaPartitionAssignment: Sendable, Hashable {
    public var topic: String
    public var partition: Int32
    public var start: KafkaStartOffset
}

/// Where a manually assigned partition starts.
public enum KafkaStartOffset: Sendable, Hashable {
    /// The oldest retained record.
    case beginning
    /// The next record published from now on.
    case end
    /// The group's committed offset (needs `groupID`), else `autoOffsetReset`.
    case committed
    /// This exact offset.
    case offset(Int64)
}
