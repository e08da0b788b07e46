import Foundation
import RescindMacros
import RescindPostgres
import RescindProtocol

/// Stores rejections (once per message position) and reports each as `message_rejected`, within
/// bounds an anonymous writer cannot push past.
///
/// Every rejection is counted in `rejection_tallies` per clock hour, topic, partition and reason
/// (counts survive any flood, and `/metrics` counts every one). Only the first `rowsPerHour` of
/// each such bucket are stored in `rejected_messages` and published; a flood of one reason
/// therefore never takes the room of another (the rare ones, `unprocessable` and
/// `retries_exhausted`, keep theirs). Bodies (each cut to `maxStoredBytes`) are kept while the
/// bucket's hourly `bytesPerHour` lasts. The claimed signer is no key: the sender chooses it.
@MemberwiseInit
struct RejectionLog: Sendable {
    /// Longest envelope prefix kept for investigation.
    static let maxStoredBytes = 64 * 1024

    var rowsPerHour: Int = 50
    var bytesPerHour: Int = 65_536

    init(_ configuration: AuditServiceConfiguration.Quarantine) {
        self.init(rowsPerHour: configuration.rowsPerHour, bytesPerHour: configuration.bytesPerHour)
    }

    func record(
        _ rejection: Rejection, at position: MessagePosition, envelope: Data?, on connection: PostgresConnection,
        into conclusions: inout Conclusions
    ) async throws {
        // Counted first: the tally row (locked until commit) also serializes the bucket's quota.
        let (rejected, stored, storedBytes) = try await connection.query(
            """
            INSERT INTO rejection_tallies AS t (window_start, topic, partition, reason, rejected)
            VALUES (date_trunc('hour', now()), \(position.topic), \(position.partition), \(rejection.reason), 1)
            ON CONFLICT (window_start, topic, partition, reason) DO UPDATE SET rejected = t.rejected + 1
            RETURNING rejected, stored, stored_bytes
            """
        ).first!.decode(Int.self, Int.self, Int.self)
        guard stored < rowsPerHour else {
            // Beyond the bucket's rows: counted only (a redelivery after a crash counts twice).
            conclusions.unstoredRejections.append((rejection.reason, position, first: rejected == stored + 1))
            return
        }
        let prefix = envelope.map { [UInt8]($0.prefix(Self.maxStoredBytes)) }
        let body = prefix.flatMap { storedBytes + $0.count <= bytesPerHour ? $0 : nil }
        let inserted = try await connection.execute(
            """
            INSERT INTO rejected_messages (topic, partition, kafka_offset, reason, signer, family_member_id,
                                           event_id, device_id, envelope)
            VALUES (\(position.topic), \(position.partition), \(position.offset), \(rejection.reason),
                    \(rejection.signer), \(rejection.familyMemberID), \(rejection.eventID), \(rejection.deviceID),
                    \(body))
            ON CONFLICT (topic, partition, kafka_offset) DO NOTHING
            """)
        try await connection.execute(
            """
            UPDATE rejection_tallies
            SET rejected = rejected - \(inserted == 1 ? 0 : 1), stored = stored + \(inserted),
                stored_bytes = stored_bytes + \(inserted == 1 ? body?.count ?? 0 : 0)
            WHERE window_start = date_trunc('hour', now()) AND topic = \(position.topic)
              AND partition = \(position.partition) AND reason = \(rejection.reason)
            """)
        // A redelivered message was rejected once already: neither counted nor reported again.
        guard inserted == 1 else { return }
        conclusions.rejections.append((rejection.reason, position))
        if body == nil, prefix != nil { conclusions.bodiesNotStored += 1 }
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
