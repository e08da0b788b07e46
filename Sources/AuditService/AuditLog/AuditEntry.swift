import Foundation
import RescindCrypto

/// One row of `audit_log`, with its place in the family member's hash chain.
struct AuditEntry: Sendable, Equatable {
    static let genesisHash = [UInt8](repeating: 0, count: 32)

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
    /// signature: a domain label, then each field in a fixed order, fixed-width or
    /// length-prefixed, so no two different entries serialize alike.
    func computedHash() -> [UInt8] {
        var bytes = Array("rescind-audit-entry-v1".utf8)
        bytes.append(0)
        bytes += logID.bytes
        bytes += familyMemberID.bytes
        bytes += seq.bigEndianBytes
        bytes += Self.lengthPrefixed(Array(eventType.utf8))
        bytes += actorUserID.bytes
        if let targetUserID {
            bytes.append(1)
            bytes += targetUserID.bytes
        } else {
            bytes.append(0)
        }
        bytes += Self.lengthPrefixed(encryptedDetails)
        bytes += Self.milliseconds(occurredAt).bigEndianBytes
        bytes += sourceID.bytes
        bytes += prevHash
        return SHA256.hash(bytes)
    }

    /// What the audit service signs: the entry hash under its own label.
    static func signingInput(entryHash: [UInt8]) -> [UInt8] {
        Array("rescind-audit-entry-signature-v1\n".utf8) + entryHash
    }

    static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    private static func lengthPrefixed(_ field: [UInt8]) -> [UInt8] {
        UInt32(field.count).bigEndianBytes + field
    }
}
