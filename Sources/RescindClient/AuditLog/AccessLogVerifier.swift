import Foundation
import RescindCrypto
import RescindProtocol

/// Checks a family member's access log on this machine, trusting only the audit service's
/// pinned key: it fetches every entry and the signed chain head, recomputes every
/// hash, link and signature (`AuditChain.verify`), pins the service's key on first use, and
/// checks the log against the head it verified last time (`VerifiedHeads`, in the same
/// directory as the pin): a log that shrank or forked since fails even with valid signatures.
/// The audit service's own re-check (`GET …/access-log/verification`) stays for operators.
public struct AccessLogVerifier: Sendable {
    let audit: AuditServiceClient
    let pin: AuditKeyPin
    let heads: VerifiedHeads

    public init(audit: AuditServiceClient, pin: AuditKeyPin) {
        self.audit = audit
        self.pin = pin
        heads = VerifiedHeads(directory: (pin.path as NSString).deletingLastPathComponent)
    }

    public struct Outcome: Sendable {
        public var report: ChainVerificationReport
        /// The key the log was checked with, and its fingerprint.
        public var key: Ed25519.PublicKey
        public var fingerprint: String
        /// The key was pinned by this run (first use, or `acceptNewKey`).
        public var pinnedNow: Bool
    }

    /// - Parameter acceptNewKey: re-pin a key that differs from the pinned one (after the user
    ///   compared it out of band); the new pin is written only if the log verifies with it.
    /// - Throws: `AuditKeyPin.Changed` when the served key differs from the pinned one and
    ///   `acceptNewKey` is false; the services' errors.
    public func verify(_ familyMemberID: UUID, acceptNewKey: Bool = false) async throws -> Outcome {
        let served = try await audit.serviceKey()
        let pinned = try pin.pinned()
        var key = served
        if let pinned, pinned != served {
            guard acceptNewKey else {
                throw AuditKeyPin.Changed(
                    pinned: AuditChain.fingerprint(pinned), served: AuditChain.fingerprint(served), path: pin.path)
            }
        } else if let pinned {
            key = pinned
        }
        // Every entry served, then the head: an entry served beyond the signed head (appended
        // behind the service's back) fails. An append between the two reads moves the head past
        // the entries read: read them again once.
        var entries = try await audit.fullAccessLog(familyMemberID)
        var head = try await audit.accessLogHead(familyMemberID)
        if head.seq > (entries.last?.seq ?? 0) {
            entries = try await audit.accessLog(familyMemberID, through: head.seq)
            head = try await audit.accessLogHead(familyMemberID)
        }
        var report = AuditChain.verify(familyMemberID: familyMemberID, entries: entries, head: head, key: key)
        report.problems += try heads.problems(familyMemberID, entries: entries, head: head)
        report.valid = report.problems.isEmpty
        if report.valid { try heads.remember(familyMemberID, .init(seq: head.seq, hash: head.hash)) }
        var pinnedNow = false
        if pinned != key, pinned == nil || report.valid {
            try pin.pin(key)
            pinnedNow = true
        }
        return Outcome(report: report, key: key, fingerprint: AuditChain.fingerprint(key), pinnedNow: pinnedNow)
    }
}
