import Foundation
import RescindPostgres
import RescindProtocol

/// Stores rejections (once per message position) and reports each as `message_rejected`.
enum RejectionLog {
    /// Longest envelope prefix kept for investigation.
    static let maxStoredBytes = 64 * 1024

    static func record(
        _ rejection: Rejection, at position: MessagePosition, envelope: Data?, on connection: PostgresConnection,
        into conclusions: inout Conclusions
    ) async throws {
        let stored = envelope.map { [UInt8]($0.prefix(maxStoredBytes)) }
        let inserted = try await connection.execute(
            """
            INSERT INTO rejected_messages (topic, partition, kafka_offset, reason, signer, family_member_id,
                                           event_id, device_id, envelope)
            VALUES (\(position.topic), \(position.partition), \(position.offset), \(rejection.reason),
                    \(rejection.signer), \(rejection.familyMemberID), \(rejection.eventID), \(rejection.deviceID),
                    \(stored))
            ON CONFLICT (topic, partition, kafka_offset) DO NOTHING
            """)
        guard inserted == 1 else { return }
        conclusions.rejections.append((rejection.reason, position))
        try conclusions.notify(
            AuditNotification(
                notificationID: UUID(), kind: .messageRejected, familyMemberID: rejection.familyMemberID,
                eventID: rejection.eventID, deviceID: rejection.deviceID,
                rejection: .init(
                    topic: position.topic, partition: position.partition, offset: position.offset,
                    reason: rejection.reason, signer: rejection.signer),
                occurredAt: Timestamp.truncated(Date())))
    }
}
