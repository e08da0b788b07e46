import Foundation
import RescindCrypto
import RescindPostgres
import RescindProtocol

/// Re-checks a family member's chain from its first entry: every entry's hash against
/// its content, its signature against the audit service's key, its link to the entry
/// before, the sequence without gaps, and the last entry against the chain head.
///
/// Because the hash covers the position (`seq`) and the previous hash, and is signed,
/// altering, removing, inserting or reordering entries shows up at the first entry
/// affected, even for someone who can write to the database (they lack the key).
///
/// Public for tools that hold only database access and the audit service's public key
/// (auditors, the hostile-input run): the check needs nothing secret.
public struct AuditChainVerifier: Sendable {
    let publicKey: Ed25519.PublicKey
    var pageSize = 500

    public init(publicKey: Ed25519.PublicKey) {
        self.publicKey = publicKey
    }

    /// - Parameter connection: searching the audit service's schema.
    public func verify(familyMemberID: UUID, on connection: PostgresConnection) async throws -> ChainVerificationReport {
        var problems: [ChainVerificationReport.Problem] = []
        var previous: AuditEntry?
        var count = 0
        while true {
            let rows = try await connection.query(
                """
                SELECT \(unescaped: AuditEntry.columns) FROM audit_log
                WHERE family_member_id = \(familyMemberID) AND seq > \(previous?.seq ?? 0)
                ORDER BY seq LIMIT \(pageSize)
                """)
            for row in rows {
                let entry = try AuditEntry(row: row)
                problems += check(entry, after: previous)
                previous = entry
                count += 1
            }
            if rows.count < pageSize { break }
        }
        let head = try await connection.query(
            """
            SELECT last_seq, last_hash, head_signature FROM audit_chain_heads
            WHERE family_member_id = \(familyMemberID)
            """
        ).first.map { try $0.decode(Int64.self, [UInt8].self, [UInt8]?.self) }
        if let head, !(head.2.map {
            publicKey.isValidSignature(
                $0, for: AuditChain.headSigningInput(familyMemberID: familyMemberID, seq: head.0, hash: head.1))
        } ?? false) {
            problems.append(
                .init(
                    code: "bad_head_signature", seq: head.0, logID: nil,
                    message: "the chain head (seq \(head.0)) is not signed by this audit service"))
        }
        if let head, head.0 != (previous?.seq ?? 0) || (previous.map { $0.entryHash != head.1 } ?? false) {
            problems.append(
                .init(
                    code: "truncated", seq: head.0, logID: nil,
                    message: "the chain head is at seq \(head.0) but the last entry found is seq \(previous?.seq ?? 0)"))
        }
        return ChainVerificationReport(
            familyMemberID: familyMemberID, valid: problems.isEmpty, entries: count,
            headHash: previous.map { Data($0.entryHash) }, problems: problems)
    }

    func check(_ entry: AuditEntry, after previous: AuditEntry?) -> [ChainVerificationReport.Problem] {
        var problems: [ChainVerificationReport.Problem] = []
        func report(_ code: String, _ message: String) {
            problems.append(.init(code: code, seq: entry.seq, logID: entry.logID, message: message))
        }
        let expectedSeq = (previous?.seq ?? 0) + 1
        if entry.seq != expectedSeq {
            report("missing_entries", "entry \(entry.logID) is at seq \(entry.seq); seq \(expectedSeq) is missing")
        }
        if entry.prevHash != (previous?.entryHash ?? AuditEntry.genesisHash) {
            report(
                "broken_link",
                "entry \(entry.logID) does not follow the entry before it (removed, inserted or reordered entries)")
        }
        if entry.computedHash() != entry.entryHash {
            report("altered", "entry \(entry.logID) was altered: its content does not match its hash")
        } else if !publicKey.isValidSignature(entry.signature, for: AuditEntry.signingInput(entryHash: entry.entryHash)) {
            report("bad_signature", "entry \(entry.logID) is not signed by this audit service")
        }
        return problems
    }
}
