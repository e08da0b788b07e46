import Foundation
import RescindCrypto

extension AuditChain {
    /// Re-checks a whole chain as a reader who trusts nothing but `key`: every entry's hash
    /// against its content, its signature, its link to the entry before, the sequence without
    /// gaps, and the last entry against the signed head.
    ///
    /// - Parameters:
    ///   - entries: every entry of the family member's log, as served, in seq order.
    ///   - head: the chain head as served; its signature must verify with `key`.
    /// - Returns: a report whose `problems` locate each inconsistency (`valid` when there are none).
    public static func verify(
        familyMemberID: UUID, entries: [AccessLogEntry], head: AccessLogHead, key: Ed25519.PublicKey
    ) -> ChainVerificationReport {
        var problems: [ChainVerificationReport.Problem] = []
        var previous: AccessLogEntry?
        for entry in entries {
            func report(_ code: String, _ message: String) {
                problems.append(.init(code: code, seq: entry.seq, logID: entry.logID, message: message))
            }
            let expectedSeq = (previous?.seq ?? 0) + 1
            if entry.familyMemberID != familyMemberID {
                report("foreign_entry", "entry \(entry.logID) belongs to another family member's log")
            }
            if entry.seq != expectedSeq {
                report("missing_entries", "entry \(entry.logID) is at seq \(entry.seq); seq \(expectedSeq) is missing")
            }
            if [UInt8](entry.prevHash) != (previous.map { [UInt8]($0.entryHash) } ?? genesisHash) {
                report(
                    "broken_link",
                    "entry \(entry.logID) does not follow the entry before it (removed, inserted or reordered entries)")
            }
            let computed = entryHash(
                .init(
                    logID: entry.logID, familyMemberID: entry.familyMemberID, seq: entry.seq, eventType: entry.eventType,
                    actorUserID: entry.actorUserID, targetUserID: entry.targetUserID,
                    encryptedDetails: [UInt8](entry.encryptedDetails), occurredAt: entry.occurredAt,
                    sourceID: entry.sourceID, prevHash: [UInt8](entry.prevHash)))
            if computed != [UInt8](entry.entryHash) {
                report("altered", "entry \(entry.logID) was altered: its content does not match its hash")
            } else if !key.isValidSignature([UInt8](entry.signature), for: entrySigningInput(entryHash: computed)) {
                report("bad_signature", "entry \(entry.logID) is not signed by the pinned audit service key")
            }
            previous = entry
        }
        let lastSeq = previous?.seq ?? 0
        let lastHash = previous.map { [UInt8]($0.entryHash) } ?? genesisHash
        let headInput = headSigningInput(familyMemberID: familyMemberID, seq: head.seq, hash: [UInt8](head.hash))
        if head.familyMemberID != familyMemberID || !key.isValidSignature([UInt8](head.signature), for: headInput) {
            problems.append(
                .init(
                    code: "bad_head_signature", seq: head.seq, logID: nil,
                    message: "the chain head (seq \(head.seq)) is not signed by the pinned audit service key"))
        } else if head.seq != lastSeq || [UInt8](head.hash) != lastHash {
            problems.append(
                .init(
                    code: head.seq > lastSeq ? "truncated" : "head_mismatch", seq: head.seq, logID: nil,
                    message: head.seq > lastSeq
                        ? "the signed chain head is at seq \(head.seq) but the last entry served is seq \(lastSeq): entries were removed"
                        : "the signed chain head (seq \(head.seq)) does not match the last entry served (seq \(lastSeq))"))
        }
        return ChainVerificationReport(
            familyMemberID: familyMemberID, valid: problems.isEmpty, entries: entries.count,
            headHash: previous.map(\.entryHash), problems: problems)
    }
}
