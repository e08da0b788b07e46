import Foundation
import Hummingbird
import RescindCrypto
import RescindProtocol
import RescindServiceSupport

/// Identity-key rotation: `POST /v1/identity-rotations` (a device of the user, with a
/// statement signed by the previous and the new identity key), received as a governed
/// operation that takes effect after the security delay unless decided first
/// (`GovernanceController`), and `GET /v1/users/{userID}/identity-rotations` (the chain of
/// rotations in effect, for anyone who pinned a key).
struct IdentityRotationController {
    let rotations: IdentityRotationStore
    let governance: GovernanceStore
    /// How far `issued_at` may be from the service's clock.
    static let clockWindow: TimeInterval = 600

    func addRoutes(to group: RouterGroup<GrantRequestContext>) {
        group.post("identity-rotations", use: rotate)
        group.get("users/:userID/identity-rotations", use: list)
    }

    @Sendable func rotate(_ request: Request, context: GrantRequestContext) async throws -> EditedResponse<GovernedOperation> {
        let caller = try context.requireIdentity()
        var rotation = try await request.decode(as: IdentityRotation.self, context: context)
        rotation.recoverySignature = nil  // only a recovery-key approval adds one
        // The beginning device's own approval (`DeviceApproval`) is checked by `beginRotation`.
        let input = try rotation.statement.signingInput()
        let statement = rotation.statement
        guard statement.userID == caller.userID else {
            throw APIError.forbidden("a device can rotate only its own user's identity")
        }
        let previousKey = try Validation.signingKey(statement.previousIdentityPublicKey, field: "previous_identity_public_key")
        let newKey = try Validation.signingKey(statement.identityPublicKey, field: "identity_public_key")
        _ = try Validation.agreementKey(statement.agreementPublicKey)
        guard abs(statement.issuedAt.timeIntervalSinceNow) <= Self.clockWindow else {
            throw APIError.unprocessable("stale_statement", "issued_at must be within \(Int(Self.clockWindow)) s of now")
        }
        guard previousKey.isValidSignature([UInt8](rotation.previousKeySignature), for: input) else {
            throw APIError.unprocessable("bad_signature", "the rotation must be signed with the previous identity key")
        }
        guard newKey.isValidSignature([UInt8](rotation.newKeySignature), for: input) else {
            throw APIError.unprocessable("bad_signature", "the rotation must also be signed with the new identity key")
        }
        return EditedResponse(status: .accepted, response: try await governance.beginRotation(rotation, from: caller))
    }

    @Sendable func list(_ request: Request, context: GrantRequestContext) async throws -> IdentityRotationList {
        _ = try context.requireIdentity()
        return IdentityRotationList(rotations: try await rotations.rotations(of: try context.uuidParameter("userID")))
    }
}
