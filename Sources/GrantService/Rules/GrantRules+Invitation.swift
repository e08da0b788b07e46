import Foundation
import RescindCrypto
import RescindProtocol

/// Invitations (sharing ADR): what a valid invitation and a valid acceptance are. The
/// service checks them as defence in depth and so that junk is refused with a clear error;
/// the guarantees come from the clients, which check the same signatures themselves.
extension GrantRules {
    /// How far `created_at` / `accepted_at` may be from the service's clock.
    static let invitationClockWindow: TimeInterval = 600

    /// The caller's own invitation, signed with their registered identity key, naming their
    /// registered agreement key, living at most seven days from about now.
    static func checkInvitation(
        _ signed: SignedInvitation, callerUserID: UUID, identityKey: Data, agreementKey: Data, now: Date
    ) throws(RuleViolation) {
        let invitation = signed.invitation
        guard invitation.inviterUserID == callerUserID else {
            throw RuleViolation(kind: .notAllowed, code: "forbidden", message: "an invitation is made by its inviter's own device")
        }
        guard invitation.inviterIdentityPublicKey == identityKey, invitation.inviterAgreementPublicKey == agreementKey else {
            throw .refused("stale_identity_key", "the invitation must name your current identity and agreement keys")
        }
        guard (try? Ed25519.PublicKey(rawRepresentation: [UInt8](invitation.invitationPublicKey))) != nil else {
            throw .refused("invalid_public_key", "invitation_public_key must be a 32-byte Ed25519 public key")
        }
        guard abs(invitation.createdAt.timeIntervalSince(now)) <= invitationClockWindow else {
            throw .refused("stale_statement", "created_at must be within \(Int(invitationClockWindow)) s of now")
        }
        guard invitation.expiresAt > invitation.createdAt,
            invitation.expiresAt.timeIntervalSince(invitation.createdAt) <= Invitation.maximumLifetime
        else {
            throw .refused("invalid_lifetime", "an invitation expires after created_at and at most seven days later")
        }
        try checkSignature(signed.signature, by: identityKey, over: try? invitation.signingInput(), "the inviter's identity key")
    }

    /// The caller accepting someone else's live, unanswered invitation, with their registered
    /// keys, signed by their identity key and by the invitation's one-time key.
    static func checkAcceptance(
        _ signed: SignedInvitationAcceptance, invitation: Invitation, alreadyAccepted: Bool, callerUserID: UUID,
        identityKey: Data, agreementKey: Data, now: Date
    ) throws(RuleViolation) {
        let acceptance = signed.acceptance
        guard acceptance.invitationID == invitation.invitationID else {
            throw .refused("invitation_mismatch", "the acceptance names another invitation than the URL")
        }
        guard acceptance.inviteeUserID == callerUserID else {
            throw RuleViolation(kind: .notAllowed, code: "forbidden", message: "an invitation is accepted by the invitee's own device")
        }
        guard invitation.inviterUserID != callerUserID else {
            throw .refused("own_invitation", "you cannot accept your own invitation")
        }
        guard invitation.expiresAt > now else {
            throw .refused("invitation_expired", "the invitation expired at \(Timestamp.format(invitation.expiresAt))")
        }
        guard !alreadyAccepted else {
            throw RuleViolation(kind: .conflict, code: "invitation_used", message: "the invitation was already accepted; it works once")
        }
        guard acceptance.inviteeIdentityPublicKey == identityKey, acceptance.inviteeAgreementPublicKey == agreementKey else {
            throw .refused("stale_identity_key", "the acceptance must name your current identity and agreement keys")
        }
        guard abs(acceptance.acceptedAt.timeIntervalSince(now)) <= invitationClockWindow else {
            throw .refused("stale_statement", "accepted_at must be within \(Int(invitationClockWindow)) s of now")
        }
        let input = try? acceptance.signingInput()
        try checkSignature(signed.identitySignature, by: identityKey, over: input, "your identity key")
        try checkSignature(signed.invitationKeySignature, by: invitation.invitationPublicKey, over: input, "the invitation's one-time key (from the token)")
    }

    private static func checkSignature(_ signature: Data, by key: Data, over input: [UInt8]?, _ signer: String) throws(RuleViolation) {
        guard let input, let publicKey = try? Ed25519.PublicKey(rawRepresentation: [UInt8](key)),
            publicKey.isValidSignature([UInt8](signature), for: input)
        else { throw .refused("bad_signature", "the signature does not verify with \(signer)") }
    }
}
