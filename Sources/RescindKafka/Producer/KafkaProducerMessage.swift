import Foundation

/// One message for `KafkaProducer.send(_:)`.
public struct KafkaProducerMessage: Sendable, Hashable {
    public var topic: String
    /// Chooses the partition (murmur2): messages of one key keep their order.
    public var key: Data?
    /// `nil` sends a tombstone.
    public var value: Data?
    public var headers: [KafkaHeader]

    public init(topic: String, key: Data?, value: Data?, headers: [KafkaHeader] = []) {
        self.topic = topic
        self.key = key
        self.value = value
        self.headers = headers
    }
}
