/// Where a Kafka message was read: identifies a rejected or held message, whose own
/// ids cannot be trusted.
struct MessagePosition: Sendable, Hashable {
    var topic: String
    var partition: Int32
    var offset: Int64
}
