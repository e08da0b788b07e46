import Foundation
import RescindPostgres
import RescindProtocol

extension AuditEntry {
    static let columns =
        "log_id, family_member_id, seq, event_type, actor_user_id, target_user_id, encrypted_details, occurred_at, source_id, prev_hash, entry_hash, signature"

    init(row: PostgresRow) throws {
        let (logID, familyMemberID, seq, eventType, actor, target, details, occurredAt, source, prev, hash, signature) =
            try row.decode(
                UUID.self, UUID.self, Int64.self, String.self, UUID.self, UUID?.self, [UInt8].self, Date.self,
                UUID.self, [UInt8].self, [UInt8].self, [UInt8].self)
        self.init(
            fields: .init(
                logID: logID, familyMemberID: familyMemberID, seq: seq, eventType: eventType, actorUserID: actor,
                targetUserID: target, encryptedDetails: details, occurredAt: occurredAt, sourceID: source, prevHash: prev),
            entryHash: hash, signature: signature)
    }

    var apiEntry: AccessLogEntry {
        AccessLogEntry(
            logID: self.logID, familyMemberID: self.familyMemberID, seq: self.seq, eventType: self.eventType,
            actorUserID: self.actorUserID, targetUserID: self.targetUserID, encryptedDetails: Data(self.encryptedDetails),
            occurredAt: self.occurredAt, sourceID: self.sourceID, prevHash: Data(self.prevHash), entryHash: Data(entryHash),
            signature: Data(signature))
    }
}

extension AuditLog {
    /// A page of a family member's log, newest first, strictly before `before` (a seq).
    static func page(
        familyMemberID: UUID, before: Int64?, limit: Int, on connection: PostgresConnection
    ) async throws -> AccessLogPage {
        let rows = try await connection.query(
            """
            SELECT \(unescaped: AuditEntry.columns) FROM audit_log
            WHERE family_member_id = \(familyMemberID) AND seq < \(before ?? Int64.max)
            ORDER BY seq DESC LIMIT \(limit)
            """)
        let entries = try rows.map { try AuditEntry(row: $0).apiEntry }
        let last = entries.last?.seq
        return AccessLogPage(entries: entries, nextBefore: entries.count == limit && (last ?? 0) > 1 ? last : nil)
    }
}
