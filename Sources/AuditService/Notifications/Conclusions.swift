import Foundation
import RescindProtocol

/// What one transaction concluded besides its own rows: notifications to publish,
/// stream events to show, and numbers for the metrics once it committed.
struct Conclusions: Sendable {
    var notifications: [AuditNotification] = []
    var streamEvents: [StreamEvent] = []
    /// Commit-to-last-ack times of the revocations completed.
    var completions: [Duration] = []
    var auditEntries = 0
    /// Reason codes of the messages rejected.
    var rejections: [String] = []

    mutating func notify(_ notification: AuditNotification) throws {
        notifications.append(notification)
        streamEvents.append(try StreamEvent(.notification, familyMemberID: notification.familyMemberID, payload: notification))
    }

    mutating func merge(_ other: Conclusions) {
        notifications += other.notifications
        streamEvents += other.streamEvents
        completions += other.completions
        auditEntries += other.auditEntries
        rejections += other.rejections
    }
}
