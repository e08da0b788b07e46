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
            fields: .init(
                logID: UUID(), familyMemberID: draft.familyMemberID, seq: head.0 + 1, eventType: draft.eventType,
                actorUserID: draft.actorUserID, targetUserID: draft.targetUserID, encryptedDetails: sealed,
                occurredAt: Timestamp.truncated(draft.occurredAt), sourceID: draft.sourceID, prevHash: head.1),
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
        let headSignature = headSignature(familyMemberID: entry.familyMemberID, seq: entry.seq, hash: entry.entryHash)
        try await connection.execute(
            """
            UPDATE audit_chain_heads SET last_seq = \(entry.seq), last_hash = \(entry.entryHash),
                                         head_signature = \(headSignature)
            WHERE family_member_id = \(entry.familyMemberID)
            """)
        return entry
    }

    func headSignature(familyMemberID: UUID, seq: Int64, hash: [UInt8]) -> [UInt8] {
        signingKey.signature(for: AuditChain.headSigningInput(familyMemberID: familyMemberID, seq: seq, hash: hash))
    }

    /// Signs the heads written before heads were signed (migration 0005), once, at start-up.
    /// - Returns: how many heads were signed.
    func signUnsignedHeads(on connection: PostgresConnection) async throws -> Int {
        // Only a head that is the newest entry of its chain: a head moved back (entries cut off)
        // and stripped of its signature in the database is never signed.
        let unsigned = try await connection.query(
            """
            SELECT h.family_member_id, h.last_seq, h.last_hash FROM audit_chain_heads h
            WHERE h.head_signature IS NULL
              AND (h.last_seq, h.last_hash) = (
                  SELECT l.seq, l.entry_hash FROM audit_log l WHERE l.family_member_id = h.family_member_id
                  ORDER BY l.seq DESC LIMIT 1)
            FOR UPDATE OF h
            """
        ).map { try $0.decode(UUID.self, Int64.self, [UInt8].self) }
        for (familyMemberID, seq, hash) in unsigned {
            try await connection.execute(
                """
                UPDATE audit_chain_heads SET head_signature = \(headSignature(familyMemberID: familyMemberID, seq: seq, hash: hash))
                WHERE family_member_id = \(familyMemberID)
                """)
        }
        return unsigned.count
    }

    /// The signed head of a family member's chain (seq 0 and the genesis hash, signed now,
    /// when the chain has no entry yet).
    /// - Returns: `nil` for a head without a signature, or a missing head of a chain that has
    ///   entries (both changed in the database: the service never signs a head it did not write).
    func head(of familyMemberID: UUID, on connection: PostgresConnection) async throws -> AccessLogHead? {
        guard
            let row = try await connection.query(
                """
                SELECT last_seq, last_hash, head_signature FROM audit_chain_heads
                WHERE family_member_id = \(familyMemberID)
                """
            ).first
        else {
            // No head: an empty chain, unless entries exist (the head row was removed): then no head is signed.
            let entries = try await connection.query(
                "SELECT count(*) FROM audit_log WHERE family_member_id = \(familyMemberID)"
            ).first!.decode(Int64.self, column: 0)
            guard entries == 0 else { return nil }
            let signature = headSignature(familyMemberID: familyMemberID, seq: 0, hash: AuditEntry.genesisHash)
            return AccessLogHead(
                familyMemberID: familyMemberID, seq: 0, hash: Data(AuditEntry.genesisHash), signature: Data(signature))
        }
        let (seq, hash, signature) = try row.decode(Int64.self, [UInt8].self, [UInt8]?.self)
        guard let signature else { return nil }
        return AccessLogHead(familyMemberID: familyMemberID, seq: seq, hash: Data(hash), signature: Data(signature))
    }
}
