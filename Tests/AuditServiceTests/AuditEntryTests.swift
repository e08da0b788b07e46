import Foundation
import RescindCrypto
import Testing

@testable import AuditService

/// The entry hash: deterministic, and different for any change of any field.
@Suite struct AuditEntryTests {
    static let entry = AuditEntry(
        fields: .init(
            logID: UUID(), familyMemberID: UUID(), seq: 7, eventType: "access_granted", actorUserID: UUID(),
            targetUserID: UUID(), encryptedDetails: [1, 2, 3], occurredAt: Date(timeIntervalSince1970: 1_763_865_123.456),
            sourceID: UUID(), prevHash: [UInt8](repeating: 9, count: 32)),
        entryHash: [], signature: [])

    @Test func everyFieldIsCovered() {
        let base = Self.entry.computedHash()
        #expect(base.count == 32 && Self.entry.computedHash() == base)
        let changes: [(String, (inout AuditEntry) -> Void)] = [
            ("log_id", { $0.logID = UUID() }), ("family_member_id", { $0.familyMemberID = UUID() }),
            ("seq", { $0.seq += 1 }), ("event_type", { $0.eventType = "access_regranted" }),
            ("actor", { $0.actorUserID = UUID() }), ("target", { $0.targetUserID = UUID() }),
            ("no target", { $0.targetUserID = nil }), ("details", { $0.encryptedDetails[0] ^= 1 }),
            ("occurred_at", { $0.occurredAt.addTimeInterval(0.001) }), ("source", { $0.sourceID = UUID() }),
            ("prev_hash", { $0.prevHash[31] ^= 1 }),
        ]
        for (field, change) in changes {
            var changed = Self.entry
            change(&changed)
            #expect(changed.computedHash() != base, "\(field)")
        }
    }

    @Test func fieldBoundariesAreUnambiguous() {
        // Moving a byte between two variable-length fields changes the hash.
        var first = Self.entry, second = Self.entry
        first.eventType = "ab"
        first.encryptedDetails = [0x63]
        second.eventType = "a"
        second.encryptedDetails = [0x62, 0x63]
        #expect(first.computedHash() != second.computedHash())
    }

    @Test func theVerifierChecksTheSignatureOverTheHash() {
        let key = Ed25519.PrivateKey()
        var entry = Self.entry
        entry.seq = 1
        entry.prevHash = AuditEntry.genesisHash
        entry.entryHash = entry.computedHash()
        entry.signature = key.signature(for: AuditEntry.signingInput(entryHash: entry.entryHash))
        #expect(AuditChainVerifier(publicKey: key.publicKey).check(entry, after: nil).isEmpty)
        let other = AuditChainVerifier(publicKey: Ed25519.PrivateKey().publicKey).check(entry, after: nil)
        #expect(other.map(\.code) == ["bad_signature"])
    }
}
