import Foundation
import RescindCrypto
import RescindProtocol

/// One row of `audit_log`, with its place in the family member's hash chain.
struct AuditEntry: Sendable, Equatable {
    static let genesisHash = AuditChain.genesisHash

    var logID: UUID
    var familyMemberID: UUID
    var seq: Int64
    var eventType: String
    var actorUserID: UUID
    var targetUserID: UUID?
    var encryptedDetails: [UInt8]
    /// Whole milliseconds (what the hash covers; PostgreSQL keeps it exactly).
    var occurredAt: Date
    var sourceID: UUID
    var prevHash: [UInt8]
    var entryHash: [UInt8]
    var signature: [UInt8]

    /// SHA-256 over the canonical serialization of every field but the hash and the
    /// signature (`AuditChain.entryHash`, which the owner's client computes the same way).
    func computedHash() -> [UInt8] {
        AuditChain.entryHash(
            .init(
                logID: logID, familyMemberID: familyMemberID, seq: seq, eventType: eventType, actorUserID: actorUserID,
                targetUserID: targetUserID, encryptedDetails: encryptedDetails, occurredAt: occurredAt,
                sourceID: sourceID, prevHash: prevHash))
    }

    /// What the audit service signs: the entry hash under its own label.
    static func signingInput(entryHash: [UInt8]) -> [UInt8] {
        AuditChain.entrySigningInput(entryHash: entryHash)
    }

    static func milliseconds(_ date: Date) -> Int64 {
        AuditChain.milliseconds(date)
    }
}
