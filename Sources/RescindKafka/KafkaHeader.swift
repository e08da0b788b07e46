import Foundation
import RescindMacros

/// One Kafka record header. Kafka allows repeated keys and null values, so headers
/// are an ordered array of these rather than a dictionary.
@MemberwiseInit
public struct KafkaHeader: Sendable, Hashable {
    public var key: String
    /// `nil` is a null header value, distinct from an empty one.
    public var value: Data?
}
