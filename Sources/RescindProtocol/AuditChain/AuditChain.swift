import Foundation
import RescindCrypto
import RescindMacros

/// The audit log's hash chain, as both sides compute it: the audit service when it appends
/// and signs, the owner's client when it re-checks the log without trusting the service.
///
/// Each entry's hash covers every field and the previous entry's hash; the service signs
/// each entry hash and, after every append, the chain head (family member, last seq, last
/// hash). A reader holding the service's public key can therefore detect an entry edited,
/// removed, reordered, inserted or cut off the end by anyone who can write to the audit
/// database but lacks the key.
public enum AuditChain {
    public static let genesisHash = [UInt8](repeating: 0, count: 32)

    /// The fields an entry hash covers.
    @MemberwiseInit
    public struct EntryFields: Sendable, Equatable {
        public var logID: UUID
        public var familyMemberID: UUID
        public var seq: Int64
        public var eventType: String
        public var actorUserID: UUID
        public var targetUserID: UUID?
        public var encryptedDetails: [UInt8]
        public var occurredAt: Date
        public var sourceID: UUID
        public var prevHash: [UInt8]
    }

    /// SHA-256 over the canonical serialization of the fields: a domain label, then each
    /// field in a fixed order, fixed-width or length-prefixed, so no two different entries
    /// serialize alike.
    public static func entryHash(_ fields: EntryFields) -> [UInt8] {
        var bytes = Array("rescind-audit-entry-v1".utf8)
        bytes.append(0)
        bytes += uuidBytes(fields.logID)
        bytes += uuidBytes(fields.familyMemberID)
        bytes += bigEndian(fields.seq)
        bytes += lengthPrefixed(Array(fields.eventType.utf8))
        bytes += uuidBytes(fields.actorUserID)
        if let target = fields.targetUserID {
            bytes.append(1)
            bytes += uuidBytes(target)
        } else {
            bytes.append(0)
        }
        bytes += lengthPrefixed(fields.encryptedDetails)
        bytes += bigEndian(milliseconds(fields.occurredAt))
        bytes += uuidBytes(fields.sourceID)
        bytes += fields.prevHash
        return SHA256.hash(bytes)
    }

    /// What the audit service signs for an entry: the entry hash under its own label.
    public static func entrySigningInput(entryHash: [UInt8]) -> [UInt8] {
        Array("rescind-audit-entry-signature-v1\n".utf8) + entryHash
    }

    /// What the audit service signs for a chain head: family member, last seq and last hash
    /// (seq 0 and the genesis hash for an empty chain).
    public static func headSigningInput(familyMemberID: UUID, seq: Int64, hash: [UInt8]) -> [UInt8] {
        Array("rescind-audit-chain-head-v1\n".utf8) + uuidBytes(familyMemberID) + bigEndian(seq) + hash
    }

    /// Whole milliseconds since 1970 (what the hash covers).
    public static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    /// A short, printable fingerprint of a signing key: the first 8 bytes of its SHA-256, hex, in pairs.
    public static func fingerprint(_ key: Ed25519.PublicKey) -> String {
        SHA256.hash(key.rawRepresentation).prefix(8).map { String(format: "%02x", $0) }.joined(separator: ":")
    }

    static func uuidBytes(_ id: UUID) -> [UInt8] {
        withUnsafeBytes(of: id.uuid) { Array($0) }
    }

    static func bigEndian(_ value: Int64) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }

    static func lengthPrefixed(_ field: [UInt8]) -> [UInt8] {
        withUnsafeBytes(of: UInt32(field.count).bigEndian) { Array($0) } + field
    }
}
