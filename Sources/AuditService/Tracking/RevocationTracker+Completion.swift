import Foundation
import RescindPostgres
import RescindProtocol

extension RevocationTracker {
    // MARK: Completion

    /// Completes the revocation when every expected device is done: records the
    /// commit-to-last-ack time (server clocks: commit and receipt of the last ack).
    func completeIfDone(
        _ revocation: RevocationRecord, on connection: PostgresConnection, into conclusions: inout Conclusions
    ) async throws {
        guard revocation.completedAt == nil else { return }
        let devices = try await devices(of: revocation.eventID, on: connection)
        guard devices.allSatisfy({ DeviceAckState(rawValue: $0.state ?? "")?.isDone == true }) else { return }
        let lastAck = try await connection.query(
            """
            SELECT coalesce(max(ack_received_at), now()) FROM revocation_devices WHERE event_id = \(revocation.eventID)
            """
        ).first!.decode(Date.self, column: 0)
        let milliseconds = max(0, Int((lastAck.timeIntervalSince(revocation.committedAt) * 1000).rounded()))
        let updated = try await connection.execute(
            """
            UPDATE revocations SET completed_at = now(), commit_to_last_ack_ms = \(milliseconds)
            WHERE event_id = \(revocation.eventID) AND completed_at IS NULL
            """)
        guard updated == 1 else { return }
        conclusions.completions.append(
            Conclusions.Completion(
                committedAt: revocation.committedAt, lastAck: lastAck, commitToLastAckMs: milliseconds,
                devices: devices.count))
        try conclusions.notify(
            AuditNotification(
                notificationID: UUID(), kind: .revocationCompleted, familyMemberID: revocation.familyMemberID,
                eventID: revocation.eventID, deviceID: nil, commitToLastAckMs: milliseconds,
                devices: try await outcomes(of: revocation.eventID, on: connection),
                occurredAt: Timestamp.truncated(Date())))
        try await appendEntry(
            "revocation_completed", for: revocation, source: revocation.eventID, occurredAt: lastAck,
            devices: devices, commitToLastAckMs: milliseconds, on: connection, into: &conclusions)
    }

    // MARK: Deadlines

    /// Marks every device with no answer past its revocation's deadline as overdue and reports
    /// each once (`overdue_at` is the guard: a second scan finds nothing). A device that said
    /// `not_now` (locked) keeps that state, flagged overdue: the page shows both.
    func markOverdue(on connection: PostgresConnection, into conclusions: inout Conclusions) async throws {
        let rows = try await connection.query(
            """
            UPDATE revocation_devices d
            SET state = CASE WHEN d.state = 'not_now' THEN d.state ELSE 'overdue' END, overdue_at = now(),
                state_changed_at = now()
            FROM revocations r
            WHERE d.event_id = r.event_id AND d.state IN ('pending', 'delivered', 'not_now', 'reissued')
              AND d.overdue_at IS NULL AND r.completed_at IS NULL AND r.deadline_at <= now()
            RETURNING d.event_id, d.device_id
            """)
        let overdue = Dictionary(grouping: try rows.map { try $0.decode(UUID.self, UUID.self) }, by: \.0)
        for (eventID, devices) in overdue.sorted(by: { $0.key.uuidString < $1.key.uuidString }) {
            guard let revocation = try await RevocationRecord.load(eventID, on: connection) else { continue }
            for (_, deviceID) in devices {
                try conclusions.notify(
                    AuditNotification(
                        notificationID: UUID(), kind: .ackOverdue, familyMemberID: revocation.familyMemberID,
                        eventID: eventID, deviceID: deviceID, deadline: revocation.deadlineAt,
                        occurredAt: Timestamp.truncated(Date())))
            }
            let late = Set(devices.map(\.1))
            try await appendEntry(
                "ack_overdue", for: revocation, source: eventID, occurredAt: revocation.deadlineAt,
                devices: try await self.devices(of: eventID, on: connection).filter { late.contains($0.deviceID) },
                on: connection, into: &conclusions)
            if let status = try await RevocationRecord.status(eventID, on: connection) {
                conclusions.streamEvents.append(try StreamEvent(.revocation, familyMemberID: status.familyMemberID, payload: status))
            }
        }
    }
}
