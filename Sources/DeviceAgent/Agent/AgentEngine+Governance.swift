import Foundation
import Logging
import RescindCrypto
import RescindKafka
import RescindObservability
import RescindProtocol

/// Governance notices (`GovernanceNotice`, signed by the grant service) on `device_commands`.
///
/// A notice asks nothing of the agent: it is verified (the pinned grant-service key, its signer,
/// this device as addressee, its limits), kept, counted and logged at notice level with what the
/// user can do about it, so that a change begun from another device — a thief's, acting first —
/// is heard of on this device within seconds (`rescind-agent pending`, `rescind-agent veto`).
/// Kept while locked too: it holds identifiers and times only.
extension AgentEngine {
    /// Called under `mode` for a message keyed to this device whose schema is a notice's.
    func receiveGovernanceNotice(_ message: KafkaMessage) async throws -> Receipt {
        let notice: GovernanceNotice
        switch Self.validateGovernanceNotice(message.value, deviceID: deviceID, serviceKey: configuration.grantServiceKey) {
        case .rejected(let reason):
            return try await reject(reason, message, what: "governance notice")
        case .accepted(let accepted):
            notice = accepted
        }
        guard try await store.keepNotice(notice, envelope: message.value ?? Data()) else { return .noted }
        metrics.governanceNotice(notice)
        logger.notice("\(Self.describe(notice, on: deviceID))", metadata: [LogKey.notice: "\(notice.noticeID.text)"])
        return .noted
    }

    /// Verifies a notice: the grant service's signature with the pinned key, its signer name,
    /// this device as addressee, its limits.
    static func validateGovernanceNotice(
        _ value: Data?, deviceID: UUID, serviceKey: Ed25519.PublicKey
    ) -> Validated<GovernanceNotice> {
        validateAddressed(
            value, schema: GovernanceNotice.schema, signer: CommandValidation.trustedSigner, key: serviceKey, to: deviceID,
            addressee: { $0.deviceID })
    }

    /// One line for the log and `rescind-agent pending`: what happened, by whom, and what to do.
    static func describe(_ notice: GovernanceNotice, on deviceID: UUID) -> String {
        let whose = notice.audience == .owner ? "user \(notice.userID.text) (who holds a grant from you)" : "your user"
        let by = notice.actorDeviceID.map { $0 == deviceID ? "this device" : "device \($0.text)" }
            ?? (notice.decidedBy == .delay ? "the security delay" : "the recovery key")
        let what: String
        switch notice.change {
        case .rotateIdentity: what = "an identity rotation of \(whose)"
        case .transferOwnership: what = "a transfer of family member \(notice.familyMemberID?.text ?? "?") by \(whose)"
        case .setRecovery: what = "a new recovery key for \(whose)"
        case .enrolDevice: what = "device \(notice.subjectDeviceID?.text ?? "?") enrolled for \(whose)"
        case .retireDevice:
            what = notice.subjectDeviceID == deviceID ? "this device retired" : "device \(notice.subjectDeviceID?.text ?? "?") of \(whose) retired"
        case .restoreDevice: what = "device \(notice.subjectDeviceID?.text ?? "?") of \(whose) restored"
        }
        switch notice.state {
        case .pending:
            let effective = notice.effectiveAt.map(Timestamp.format) ?? "after the security delay"
            let act = notice.audience == .owner
                ? "if it is not theirs, revoke them (rescind revoke … --everywhere --stolen)"
                : "if it is not yours, veto it: rescind-agent veto \(notice.operationID?.text ?? "")"
            return "governance: \(what) was begun by \(by); it takes effect \(effective) unless vetoed; \(act)"
        case .applied where notice.change == .enrolDevice && notice.effectiveAt != nil:
            let until = notice.effectiveAt.map(Timestamp.format) ?? ""
            let act = notice.audience == .owner
                ? "if it is not theirs, revoke them (rescind revoke … --everywhere --stolen)"
                : "if it is not yours, retire it before \(until): rescind device retire \(notice.subjectDeviceID?.text ?? "")"
            return "governance: \(what) by \(by), provisionally until \(until); \(act)"
        case .applied where notice.operationID == nil:
            return "governance: \(what) by \(by)"
        default:
            return "governance: \(what) is \(notice.state.rawValue) (\(by))"
        }
    }
}
