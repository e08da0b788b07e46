import Foundation
import GRDB
import RescindProtocol
import RescindTracing

/// Re-issued commands: a new inbox entry (the re-issue id) for the grant service's command of
/// the same revocation that the device already holds, so that it is carried out again.
extension AgentStore {
    enum ReissueResult: Equatable, Sendable {
        /// Queued under the re-issue id.
        case queued(DeviceCommand)
        /// Seen before.
        case duplicate
        /// This device holds no command of that revocation (it fetches it at check-in).
        case notHeld
    }

    /// Queues the command this device holds for `reissue.eventID` again, under `reissue.reissueID`;
    /// with `receipts`, its `delivered` receipt (naming the original and the attempt) is owed in
    /// the same transaction.
    func enqueue(_ reissue: CommandReissue, receipts: ReceiptSigner? = nil, trace: TraceContext? = nil) async throws -> ReissueResult {
        try await write { db in
            if try Bool.fetchOne(
                db, sql: "SELECT 1 FROM commands WHERE command_id = ?", arguments: [reissue.reissueID.text]) == true
            {
                return .duplicate
            }
            // The grant service's own command (not an earlier re-issue), the first received.
            guard
                let row = try Row.fetchOne(
                    db,
                    sql: """
                        SELECT * FROM commands WHERE event_id = ? AND device_id = ? AND original_command_id IS NULL
                        ORDER BY rowid LIMIT 1
                        """,
                    arguments: [reissue.eventID.text, reissue.deviceID.text])
            else { return .notHeld }
            var command = try Self.command(from: row)
            let original = command.commandID
            command.commandID = reissue.reissueID
            try db.execute(
                sql: """
                    INSERT INTO commands (command_id, event_id, device_id, action, family_member_id, fmk_version, issued_at,
                                          received_at, state, source, original_command_id, attempt, offset_committed,
                                          traceparent, tracestate)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', 'reissue', ?, ?, 1, ?, ?)
                    """,
                arguments: [
                    command.commandID.text, command.eventID.text, command.deviceID.text, command.action.rawValue,
                    command.familyMemberID.text, command.newFMKVersion, command.issuedAt.timeIntervalSince1970,
                    Date().timeIntervalSince1970, original.text, reissue.attempt, trace?.traceparent, trace?.storableTraceState,
                ])
            if let receipts {
                Self.recordReceipt(in: db) {
                    try receipts.receipt(
                        for: command, .delivered, heldVersion: try Self.familyMember(command.familyMemberID, in: db).heldVersion,
                        originalCommandID: original, attempt: reissue.attempt)
                }
            }
            return .queued(command)
        }
    }

    /// The grant service's command and the attempt a re-issued inbox entry stands for.
    static func reissueOf(_ commandID: UUID, in db: Database) throws -> (original: UUID, attempt: Int)? {
        guard
            let row = try Row.fetchOne(
                db, sql: "SELECT original_command_id, attempt FROM commands WHERE command_id = ?", arguments: [commandID.text]),
            let text = row["original_command_id"] as String?, let original = UUID(uuidString: text),
            let attempt = row["attempt"] as Int?
        else { return nil }
        return (original, attempt)
    }
}
