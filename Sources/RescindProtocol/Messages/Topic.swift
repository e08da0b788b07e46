/// The Kafka topics of Rescind. The message key of each is noted: per-key
/// ordering is what lets consumers see one family member's (or device's) events
/// in commit order.
public enum Topic: String, CaseIterable, Sendable, Codable {
    /// One fact per committed revocation; keyed by family member id.
    case revocationEvents = "revocation_events"
    /// Every other access change, keyed by family member id; and each governance notice
    /// once for the audit service, keyed by user id.
    case accessEvents = "access_events"
    /// One command per affected device, and the governance notices addressed to a device
    /// (`GovernanceNotice`); keyed by device id.
    case deviceCommands = "device_commands"
    /// One signed acknowledgement per command; keyed by device id.
    case deviceAcks = "device_acks"
    /// What the audit service concluded; keyed by family member id.
    case auditNotifications = "audit_notifications"
}
