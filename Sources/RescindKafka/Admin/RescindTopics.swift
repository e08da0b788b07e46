/// The Kafka topics of Rescind's design, for creating them (dev stack, migrations).
///
/// The same names appear in `RescindProtocol.Topic`, which also documents each
/// topic's key and payload; this module stays below the protocol layer, so it keeps
/// its own list.
public enum RescindTopics {
    public static let revocationEvents = "revocation_events"
    public static let accessEvents = "access_events"
    public static let deviceCommands = "device_commands"
    public static let deviceAcks = "device_acks"
    public static let auditNotifications = "audit_notifications"

    public static let all = [revocationEvents, accessEvents, deviceCommands, deviceAcks, auditNotifications]

    /// Specs for every topic with the same partition count and replication factor.
    public static func specs(partitions: Int32, replicationFactor: Int16) -> [KafkaTopic] {
        all.map { KafkaTopic(name: $0, partitions: partitions, replicationFactor: replicationFactor) }
    }
}
