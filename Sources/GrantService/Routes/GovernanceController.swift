import Foundation
import Hummingbird
import RescindCrypto
import RescindProtocol
import RescindServiceSupport

/// A user's governed operations (`GovernedOperation`), for the user's own devices:
/// `GET /v1/governance/operations` lists them (a CLI shows the pending ones at its next call),
/// `POST /v1/governance/operations/{operationID}/approve|veto|cancel` decides one, and
/// `POST /v1/devices/{deviceID}/clear` unfreezes a device a veto froze, and
/// `POST /v1/recovery-key` begins setting a new recovery key (a governed operation).
struct GovernanceController {
    let governance: GovernanceStore

    func addRoutes(to group: RouterGroup<GrantRequestContext>) {
        group.get("governance/operations", use: list)
        group.post("governance/operations/:operationID/approve", use: approve)
        group.post("governance/operations/:operationID/veto", use: veto)
        group.post("governance/operations/:operationID/cancel", use: cancel)
        group.post("devices/:deviceID/clear", use: clear)
        group.post("recovery-key", use: setRecoveryKey)
    }

    /// A new recovery key for the caller's user, signed by itself: pending for the security delay
    /// unless a second device or the current recovery key approves it.
    @Sendable func setRecoveryKey(_ request: Request, context: GrantRequestContext) async throws -> EditedResponse<GovernedOperation> {
        let caller = try context.requireIdentity()
        let change = try await request.decode(as: RecoveryKeyChange.self, context: context)
        guard change.userID == caller.userID else { throw APIError.forbidden("a device can set only its own user's recovery key") }
        let key = try Validation.signingKey(change.recoveryPublicKey, field: "recovery_public_key")
        if let previous = change.previousRecoveryPublicKey {
            _ = try Validation.signingKey(previous, field: "previous_recovery_public_key")
        }
        guard key.isValidSignature([UInt8](change.signature), for: try change.signingInput()) else {
            throw APIError.unprocessable("bad_signature", "a recovery key must be registered with its own signature")
        }
        return EditedResponse(status: .accepted, response: try await governance.beginRecoveryKeyChange(change, from: caller))
    }

    @Sendable func list(_ request: Request, context: GrantRequestContext) async throws -> GovernedOperationList {
        GovernedOperationList(operations: try await governance.operations(of: try context.requireIdentity().userID))
    }

    /// The body is optional: `GovernanceApproval` with the approving device's certified approval.
    @Sendable func approve(_ request: Request, context: GrantRequestContext) async throws -> GovernedOperation {
        let caller = try context.requireIdentity()
        let body = try await request.decodeIfPresent(as: GovernanceApproval.self, context: context)
        return try await governance.approve(try context.uuidParameter("operationID"), by: caller, deviceApproval: body?.deviceApproval)
    }

    @Sendable func veto(_ request: Request, context: GrantRequestContext) async throws -> GovernedOperation {
        try await governance.veto(try context.uuidParameter("operationID"), by: try context.requireIdentity())
    }

    @Sendable func cancel(_ request: Request, context: GrantRequestContext) async throws -> GovernedOperation {
        try await governance.cancel(try context.uuidParameter("operationID"), by: try context.requireIdentity())
    }

    @Sendable func clear(_ request: Request, context: GrantRequestContext) async throws -> HTTPResponse.Status {
        try await governance.clear(try context.uuidParameter("deviceID"), by: try context.requireIdentity())
        return .noContent
    }
}
