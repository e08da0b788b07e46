import Foundation
import GRDB
import RescindProtocol

/// Governance notices addressed to this device, kept as the signed envelopes that announced them.
extension AgentStore {
    /// Keeps a verified notice. - Returns: `false` when it was kept before (a redelivery).
    func keepNotice(_ notice: GovernanceNotice, envelope: Data) async throws -> Bool {
        try await write { db in
            try db.execute(
                sql: """
                    INSERT INTO governance_notices (notice_id, operation_id, change, state, occurred_at, notice, received_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (notice_id) DO NOTHING
                    """,
                arguments: [
                    notice.noticeID.text, notice.operationID?.text, notice.change.rawValue, notice.state.rawValue,
                    notice.occurredAt.timeIntervalSince1970, envelope, Date().timeIntervalSince1970,
                ])
            return db.changesCount == 1
        }
    }

    /// The governed operations whose latest notice here says they are pending, oldest first: what
    /// this device was told awaits a veto, whatever the grant service lists now.
    func pendingNotices() async throws -> [GovernanceNotice] {
        try await read { db in
            try Data.fetchAll(
                db,
                sql: """
                    SELECT n.notice FROM governance_notices n
                    WHERE n.operation_id IS NOT NULL AND n.state = 'pending'
                      AND NOT EXISTS (
                          SELECT 1 FROM governance_notices later
                          WHERE later.operation_id = n.operation_id AND later.state <> 'pending')
                    ORDER BY n.occurred_at
                    """
            ).map { try SignedMessage<GovernanceNotice>.decode($0, schema: GovernanceNotice.schema).payload }
        }
    }

    /// Every notice kept, newest first (at most `limit`).
    func notices(limit: Int = 50) async throws -> [GovernanceNotice] {
        try await read { db in
            try Data.fetchAll(
                db, sql: "SELECT notice FROM governance_notices ORDER BY occurred_at DESC, received_at DESC LIMIT ?",
                arguments: [limit]
            ).map { try SignedMessage<GovernanceNotice>.decode($0, schema: GovernanceNotice.schema).payload }
        }
    }
}
