import Foundation
import GRDB
import RescindObservability
import RescindProtocol
import RescindTracing

/// The ack outbox: signed acks owed to `device_acks` until the broker acknowledged them.
extension AgentStore {
    struct OwedAck: Sendable {
        var ackID: UUID
        var message: Data
        /// A receipt (`delivered`, `not_now`) rather than an answer or a report.
        var isReceipt = false
        /// The trace of its command's handling, which publishing it continues.
        var trace: TraceContext?
    }

    /// Owed answers and reports (no receipts).
    func owedAcks(limit: Int = 100) async throws -> [OwedAck] {
        try await owed(receipts: false, limit: limit)
    }

    /// Everything owed to `device_acks`, receipts included, in the order it was recorded.
    func owedMessages(limit: Int = 100) async throws -> [OwedAck] {
        try await owed(receipts: true, limit: limit)
    }

    /// What the ack publisher sends now: everything owed, in the order it was recorded, except
    /// `delivered` receipts younger than `hold` whose command is still pending in the inbox (they
    /// go with its ack, in the same batch, or alone once `hold` has passed); `heldFor` is how
    /// long until the first held one is due (`nil`: none held). A receipt of a sealed command
    /// (`not_now`, not in the inbox) is never held.
    func sendableMessages(holdingReceipts hold: Duration, limit: Int = 100) async throws -> (owed: [OwedAck], heldFor: Duration?) {
        let holdSeconds = hold.seconds
        guard holdSeconds > 0 else { return (try await owedMessages(limit: limit), nil) }
        return try await read { db in
            let now = Date().timeIntervalSince1970
            let held = """
                kind = 'receipt' AND created_at > ?
                AND EXISTS (SELECT 1 FROM commands c WHERE c.command_id = ack_outbox.command_id AND c.state = 'pending')
                """
            let owed = try Row.fetchAll(
                db,
                sql: """
                    SELECT ack_id, message, kind, traced.traceparent, traced.tracestate
                    FROM ack_outbox LEFT JOIN commands traced USING (command_id)
                    WHERE sent_at IS NULL AND NOT (\(held))
                    ORDER BY created_at, ack_outbox.rowid LIMIT ?
                    """,
                arguments: [now - holdSeconds, limit]
            ).compactMap(Self.owedAck(_:))
            let firstHeld = try Double.fetchOne(
                db, sql: "SELECT min(created_at) FROM ack_outbox WHERE sent_at IS NULL AND \(held)", arguments: [now - holdSeconds])
            return (owed, firstHeld.map { .milliseconds(max(1, Int((($0 + holdSeconds) - now) * 1000))) })
        }
    }

    private static func owedAck(_ row: Row) -> OwedAck? {
        UUID(uuidString: row["ack_id"]).map {
            OwedAck(ackID: $0, message: row["message"], isReceipt: (row["kind"] as String) == "receipt", trace: trace(from: row))
        }
    }

    private func owed(receipts: Bool, limit: Int) async throws -> [OwedAck] {
        try await read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT ack_id, message, kind, traced.traceparent, traced.tracestate
                    FROM ack_outbox LEFT JOIN commands traced USING (command_id)
                    WHERE sent_at IS NULL AND (? OR kind <> 'receipt')
                    ORDER BY created_at, ack_outbox.rowid LIMIT ?
                    """,
                arguments: [receipts, limit]
            ).compactMap(Self.owedAck(_:))
        }
    }

    /// Marks acks sent (kept, as the device's history); receipts are deleted instead, counted in
    /// `receipts_sent`: the audit service keeps them, and the data directory of a locked agent
    /// then holds no trace of the commands it sealed (`secure_delete` zeroes the rows, and a
    /// receipt of a sealed command, one the inbox does not hold, leaves the `vacuum` task, so the
    /// log is scrubbed and the file compacted before this returns; see `AgentStore`). A VACUUM an
    /// erasure left for after its ack (`complete`) runs here too.
    /// Not synced (`write(synced:)`): lost to a power cut, the acks and receipts are sent again
    /// after the restart and the audit service keeps one of each (by `ack_id`).
    func markSent(_ ackIDs: [UUID]) async throws {
        guard !ackIDs.isEmpty else { return }
        try await write(synced: false) { db in
            let now = Date().timeIntervalSince1970
            var receipts = 0
            var sealedTrace = false
            for id in ackIDs {
                let command = try String.fetchOne(
                    db, sql: "SELECT command_id FROM ack_outbox WHERE ack_id = ? AND kind = 'receipt'", arguments: [id.text])
                try db.execute(sql: "DELETE FROM ack_outbox WHERE ack_id = ? AND kind = 'receipt'", arguments: [id.text])
                receipts += db.changesCount
                if let command, !sealedTrace {
                    sealedTrace = try !(Bool.fetchOne(
                        db, sql: "SELECT EXISTS (SELECT 1 FROM commands WHERE command_id = ?)", arguments: [command]) ?? false)
                }
                try db.execute(sql: "UPDATE ack_outbox SET sent_at = ? WHERE ack_id = ?", arguments: [now, id.text])
            }
            if sealedTrace { try db.execute(sql: "INSERT OR IGNORE INTO maintenance (task) VALUES ('vacuum')") }
            if receipts > 0 {
                try db.execute(
                    sql: """
                        INSERT INTO counters (name, value) VALUES ('receipts_sent', ?)
                        ON CONFLICT (name) DO UPDATE SET value = value + excluded.value
                        """,
                    arguments: [receipts])
            }
        }
        // The trace of a sealed command, or an erasure compacted only after its ack (`complete`).
        try await vacuumIfNeeded()
    }

    /// Records the receipt `make` signs, inside the caller's transaction. A receipt is never worth
    /// holding up a command: one that cannot be made or recorded is left out.
    static func recordReceipt(in db: Database, _ make: () throws -> (ack: DeviceAck, message: Data)) {
        guard let receipt = try? make() else { return }
        try? insertReceipt(receipt, in: db)
    }

    /// Records a receipt owed; the same receipt (its id derives from the command and the
    /// outcome) is recorded once while it is owed, and the audit service keeps one of it.
    static func insertReceipt(_ receipt: (ack: DeviceAck, message: Data), in db: Database) throws {
        try db.execute(
            sql: """
                INSERT OR IGNORE INTO ack_outbox (ack_id, command_id, message, created_at, kind)
                VALUES (?, ?, ?, ?, 'receipt')
                """,
            arguments: [receipt.ack.ackID.text, receipt.ack.commandID.text, receipt.message, Date().timeIntervalSince1970])
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
