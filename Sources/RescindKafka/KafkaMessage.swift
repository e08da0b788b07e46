import Foundation

/// A record read from Kafka. All bytes are copied out of librdkafka, so the value
/// outlives the consumer that produced it.
public struct KafkaMessage: Sendable, Hashable {
    public var topic: String
    public var partition: Int32
    public var offset: Int64
    /// `nil` for a record produced without a key.
    public var key: Data?
    /// `nil` for a tombstone (null value).
    public var value: Data?
    public var headers: [KafkaHeader]
    /// Create time or log-append time as the broker reports it; `nil` when the record carries none.
    public var timestamp: Date?

    public init(
        topic: String, partition: Int32, offset: Int64, key: Data?, value: Data?,
        headers: [KafkaHeader] = [], timestamp: Date? = nil
    ) {
        self.topic = topic
        self.partition = partition
        self.offset = offset
        self.key = key
        self.value = value
        self.headers = headers
        self.timestamp = timestamp
    }
}
