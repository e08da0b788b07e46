import Foundation
import GRDB
import RescindProtocol

/// The ack outbox: signed acks owed to `device_acks` until the broker acknowledged them.
extension AgentStore {
    struct OwedAck: Sendable {
        var ackID: UUID
        var message: Data
    }

    func owedAcks(limit: Int = 100) async throws -> [OwedAck] {
        try await read { db in
            try Row.fetchAll(
                db, sql: "SELECT ack_id, message FROM ack_outbox WHERE sent_at IS NULL ORDER BY created_at, rowid LIMIT ?",
                arguments: [limit]
            ).compactMap { row in
                UUID(uuidString: row["ack_id"]).map { OwedAck(ackID: $0, message: row["message"]) }
            }
        }
    }

    func markSent(_ ackIDs: [UUID]) async throws {
        guard !ackIDs.isEmpty else { return }
        _ = try await write { db in
            let now = Date().timeIntervalSince1970
            for id in ackIDs {
                try db.execute(sql: "UPDATE ack_outbox SET sent_at = ? WHERE ack_id = ?", arguments: [now, id.text])
            }
        }
    }

    static func insertAck(_ ack: DeviceAck, message: Data, in db: Database) throws {
        try db.execute(
            sql: "INSERT INTO ack_outbox (ack_id, command_id, message, created_at) VALUES (?, ?, ?, ?)",
            arguments: [ack.ackID.text, ack.commandID.text, message, Date().timeIntervalSince1970])
    }
}

extension AgentStore {
    /// Queues another signed message for `device_acks` (a key chain violation report) in the
    /// ack outbox; a second call with the same id changes nothing.
    func queueMessage(id: UUID, message: Data) async throws {
        _ = try await write { db in
            try db.execute(
                sql: "INSERT OR IGNORE INTO ack_outbox (ack_id, command_id, message, created_at) VALUES (?, ?, ?, ?)",
                arguments: [id.text, id.text, message, Date().timeIntervalSince1970])
        }
    }
}
