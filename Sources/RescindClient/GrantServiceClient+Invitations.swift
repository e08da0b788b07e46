import Foundation
import RescindProtocol

/// The invitation routes of the grant service (sharing ADR): `UserSession`'s invitation
/// flows sign what they send and check what they get.
extension GrantServiceClient {
    public func createInvitation(_ invitation: SignedInvitation) async throws -> InvitationResponse {
        try await send(.post, "v1/invitations", body: invitation)
    }

    /// The signed invitation; its acceptance only when the caller is the inviter.
    public func invitation(_ id: UUID) async throws -> InvitationResponse {
        try await send(.get, "v1/invitations/\(id.uuidString.lowercased())")
    }

    public func acceptInvitation(_ id: UUID, _ acceptance: SignedInvitationAcceptance) async throws -> InvitationResponse {
        try await send(.post, "v1/invitations/\(id.uuidString.lowercased())/acceptance", body: acceptance)
    }
}
