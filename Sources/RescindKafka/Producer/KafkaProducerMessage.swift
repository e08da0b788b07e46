import Foundation
import RescindMacros

/// One message for `KafkaProducer.send(_:)`.
@MemberwiseInit
public struct KafkaProducerMessage: Sendable, Hashable {
    public var topic: String
    /// Chooses the partition (murmur2): messages of one key keep their order.
    public var key: Data?
    /// `nil` sends a tombstone.
    public var value: Data?
    public var headers: [KafkaHeader] = []
}
