import Foundation
import RescindCrypto
import RescindPostgres
import RescindProtocol

/// Appends to the per-family-member audit chains, inside the caller's transaction.
///
/// Details are sealed to the owner's X25519 key before they reach the database: the
/// service writes them and can never read them back. Each entry is hashed with its
/// predecessor's hash and signed with the audit service's key.
struct AuditLog: Sendable {
    let signingKey: Ed25519.PrivateKey

    /// What the caller knows about an entry; the log adds the chain fields.
    struct Draft: Sendable {
        var familyMemberID: UUID
        var eventType: String
        var actorUserID: UUID
        var targetUserID: UUID?
        var details: AuditDetails
        var occurredAt: Date
        /// The event (or ack) recorded; an entry of the same type and source is never added twice.
        var sourceID: UUID
        var owner: X25519.PublicKey
    }

    /// Seals the details, links the entry to its chain and inserts it. The chain head row
    /// is locked until the transaction ends, so concurrent appends to one chain serialize.
    /// - Returns: the entry, or `nil` when this source and type were already recorded.
    @discardableResult
    func append(_ draft: Draft, on connection: PostgresConnection) async throws -> AuditEntry? {
        let sealed = try AnonymousSealedBox.seal([UInt8](try CanonicalJSON.encode(draft.details)), to: draft.owner)
        try await connection.execute(
            """
            INSERT INTO audit_chain_heads (family_member_id, last_seq, last_hash)
            VALUES (\(draft.familyMemberID), 0, \(AuditEntry.genesisHash)) ON CONFLICT DO NOTHING
            """)
        let head = try await connection.query(
            "SELECT last_seq, last_hash FROM audit_chain_heads WHERE family_member_id = \(draft.familyMemberID) FOR UPDATE"
        ).first!.decode(Int64.self, [UInt8].self)
        var entry = AuditEntry(
            logID: UUID(), familyMemberID: draft.familyMemberID, seq: head.0 + 1, eventType: draft.eventType,
            actorUserID: draft.actorUserID, targetUserID: draft.targetUserID, encryptedDetails: sealed,
            occurredAt: Timestamp.truncated(draft.occurredAt), sourceID: draft.sourceID, prevHash: head.1,
            entryHash: [], signature: [])
        entry.entryHash = entry.computedHash()
        entry.signature = signingKey.signature(for: AuditEntry.signingInput(entryHash: entry.entryHash))
        let inserted = try await connection.execute(
            """
            INSERT INTO audit_log (log_id, family_member_id, seq, event_type, actor_user_id, target_user_id,
                                   encrypted_details, occurred_at, source_id, prev_hash, entry_hash, signature)
            VALUES (\(entry.logID), \(entry.familyMemberID), \(entry.seq), \(entry.eventType), \(entry.actorUserID),
                    \(entry.targetUserID), \(entry.encryptedDetails), \(entry.occurredAt), \(entry.sourceID),
                    \(entry.prevHash), \(entry.entryHash), \(entry.signature))
            ON CONFLICT (source_id, event_type) DO NOTHING
            """)
        guard inserted == 1 else { return nil }
        try await connection.execute(
            """
            UPDATE audit_chain_heads SET last_seq = \(entry.seq), last_hash = \(entry.entryHash)
            WHERE family_member_id = \(entry.familyMemberID)
            """)
        return entry
    }
}
