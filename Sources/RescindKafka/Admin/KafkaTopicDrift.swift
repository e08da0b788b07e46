import RescindMacros

/// How an existing topic differs from its spec, in a way Rescind will not repair by
/// itself: partitions cannot be taken away, and changing retention or replication of a
/// live topic is an operator's decision.
@MemberwiseInit
public struct KafkaTopicDrift: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        /// Fewer partitions than the spec: fewer consumers can share the topic.
        case tooFewPartitions(expected: Int32, actual: Int32)
        /// Fewer copies than the spec.
        case replicationFactorTooLow(expected: Int16, actual: Int16)
        /// A configuration entry with another value, or none reported (`actual == nil`).
        case configuration(key: String, expected: String, actual: String?)
    }

    public var topic: String
    public var kind: Kind

    public var description: String {
        switch kind {
        case .tooFewPartitions(let expected, let actual):
            "\(topic): \(actual) partitions, configured \(expected) (add partitions with the broker's tools; they cannot be removed)"
        case .replicationFactorTooLow(let expected, let actual):
            "\(topic): replication factor \(actual), configured \(expected)"
        case .configuration(let key, let expected, let actual?):
            "\(topic): \(key)=\(actual), configured \(expected)"
        case .configuration(let key, let expected, nil):
            "\(topic): the broker reports no \(key), configured \(expected)"
        }
    }
}
