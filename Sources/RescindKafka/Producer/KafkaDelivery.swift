import RescindMacros

/// Where the broker stored an acknowledged message.
@MemberwiseInit
public struct KafkaDelivery: Sendable, Hashable {
    public var topic: String
    public var partition: Int32
    public var offset: Int64
}
