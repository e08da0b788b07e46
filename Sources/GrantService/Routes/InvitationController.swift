import Foundation
import Hummingbird
import RescindProtocol
import RescindServiceSupport

/// Invitations (sharing ADR): `POST /v1/invitations` (the inviter's device),
/// `GET /v1/invitations/{id}` (anyone signed in who has the id, from the token; the acceptance
/// only to the inviter and to the invitee it names, whose rerun after a crash finds it there), `POST /v1/invitations/{id}/acceptance` (the invitee's device, once).
struct InvitationController {
    let invitations: InvitationStore

    func addRoutes(to group: RouterGroup<GrantRequestContext>) {
        group.post("invitations", use: create)
        group.get("invitations/:invitationID", use: show)
        group.post("invitations/:invitationID/acceptance", use: accept)
    }

    @Sendable func create(_ request: Request, context: GrantRequestContext) async throws -> EditedResponse<InvitationResponse> {
        let caller = try context.requireIdentity()
        let signed = try await request.decode(as: SignedInvitation.self, context: context)
        let keys = try await invitations.keys(of: caller.userID)
        try GrantRules.checkInvitation(
            signed, callerUserID: caller.userID, identityKey: keys.identity, agreementKey: keys.agreement, now: Date())
        return EditedResponse(status: .created, response: try await invitations.create(signed))
    }

    @Sendable func show(_ request: Request, context: GrantRequestContext) async throws -> InvitationResponse {
        let caller = try context.requireIdentity()
        let (signed, acceptance) = try await invitations.invitation(try context.uuidParameter("invitationID"))
        let status: InvitationResponse.Status =
            acceptance != nil ? .accepted : signed.invitation.expiresAt <= Date() ? .expired : .pending
        let mayRead = signed.invitation.inviterUserID == caller.userID || acceptance?.acceptance.inviteeUserID == caller.userID
        return InvitationResponse(invitation: signed, status: status, acceptance: mayRead ? acceptance : nil)
    }

    @Sendable func accept(_ request: Request, context: GrantRequestContext) async throws -> EditedResponse<InvitationResponse> {
        let caller = try context.requireIdentity()
        let id = try context.uuidParameter("invitationID")
        let signed = try await request.decode(as: SignedInvitationAcceptance.self, context: context)
        guard signed.acceptance.invitationID == id else {
            throw RuleViolation.refused("invitation_mismatch", "the acceptance names another invitation than the URL")
        }
        let keys = try await invitations.keys(of: caller.userID)
        let now = Date()
        let response = try await invitations.accept(signed) { invitation, accepted in
            try GrantRules.checkAcceptance(
                signed, invitation: invitation, alreadyAccepted: accepted, callerUserID: caller.userID,
                identityKey: keys.identity, agreementKey: keys.agreement, now: now)
        }
        return EditedResponse(status: .created, response: response)
    }
}
