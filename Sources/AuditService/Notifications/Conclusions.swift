import Foundation
import RescindProtocol
import RescindTracing

/// What one transaction concluded besides its own rows: notifications to publish,
/// stream events to show, and numbers for the metrics once it committed.
struct Conclusions: Sendable {
    var notifications: [AuditNotification] = []
    var streamEvents: [StreamEvent] = []
    /// The revocations completed: from their commit to their last ack.
    var completions: [Completion] = []
    var auditEntries = 0
    /// Commands re-issued to devices (published on `device_commands`), each with the context of
    /// its `command reissued` span (`nil`: untraced), which the relay continues in its headers.
    var reissues: [(command: CommandReissue, trace: TraceContext?)] = []
    /// The messages rejected: reason code and where each was read.
    var rejections: [(reason: String, position: MessagePosition)] = []
    /// Rejections beyond their bucket's hourly rows: counted only (`first`: the first of the
    /// bucket's hour, logged once).
    var unstoredRejections: [(reason: String, position: MessagePosition, first: Bool)] = []
    /// Rejections stored without their body (the hourly byte budget of its topic, partition and reason was spent).
    var bodiesNotStored = 0
    /// Held acks evicted to keep `pending_acks` bounded, by cause (`device_limit`, `total_limit`).
    var evictedHeldAcks: [String] = []

    struct Completion: Sendable {
        /// The grant service's commit time, as the revocation event states it.
        var committedAt: Date
        /// When the audit service received the last ack.
        var lastAck: Date
        var commitToLastAckMs: Int
        var devices: Int
    }

    mutating func notify(_ notification: AuditNotification) throws {
        notifications.append(notification)
        streamEvents.append(try StreamEvent(.notification, familyMemberID: notification.familyMemberID, payload: notification))
    }
}
