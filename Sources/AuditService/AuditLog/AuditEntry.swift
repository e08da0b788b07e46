import Foundation
import RescindCrypto
import RescindProtocol

/// One row of `audit_log`, with its place in the family member's hash chain: the fields its
/// hash covers (read as its own, `entry.seq`), the hash, and the audit service's signature of it.
@dynamicMemberLookup
struct AuditEntry: Sendable, Equatable {
    static let genesisHash = AuditChain.genesisHash

    /// Every field but the hash and the signature; `occurredAt` in whole milliseconds (what the
    /// hash covers; PostgreSQL keeps it exactly).
    var fields: AuditChain.EntryFields
    var entryHash: [UInt8]
    var signature: [UInt8]

    subscript<Value>(dynamicMember field: WritableKeyPath<AuditChain.EntryFields, Value>) -> Value {
        get { fields[keyPath: field] }
        set { fields[keyPath: field] = newValue }
    }

    /// SHA-256 over the canonical serialization of `fields` (`AuditChain.entryHash`, which the
    /// owner's client computes the same way).
    func computedHash() -> [UInt8] {
        AuditChain.entryHash(fields)
    }

    /// What the audit service signs: the entry hash under its own label.
    static func signingInput(entryHash: [UInt8]) -> [UInt8] {
        AuditChain.entrySigningInput(entryHash: entryHash)
    }

    static func milliseconds(_ date: Date) -> Int64 {
        AuditChain.milliseconds(date)
    }
}
