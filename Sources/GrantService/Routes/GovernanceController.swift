import Foundation
import Hummingbird
import RescindProtocol
import RescindServiceSupport

/// A user's governed operations (`GovernedOperation`), for the user's own devices:
/// `GET /v1/governance/operations` lists them (a CLI shows the pending ones at its next call),
/// `POST /v1/governance/operations/{operationID}/approve|veto|cancel` decides one, and
/// `POST /v1/devices/{deviceID}/clear` unfreezes a device a veto froze.
struct GovernanceController {
    let governance: GovernanceStore

    func addRoutes(to group: RouterGroup<GrantRequestContext>) {
        group.get("governance/operations", use: list)
        group.post("governance/operations/:operationID/approve", use: approve)
        group.post("governance/operations/:operationID/veto", use: veto)
        group.post("governance/operations/:operationID/cancel", use: cancel)
        group.post("devices/:deviceID/clear", use: clear)
    }

    @Sendable func list(_ request: Request, context: GrantRequestContext) async throws -> GovernedOperationList {
        GovernedOperationList(operations: try await governance.operations(of: try context.requireIdentity().userID))
    }

    @Sendable func approve(_ request: Request, context: GrantRequestContext) async throws -> GovernedOperation {
        try await governance.approve(try context.uuidParameter("operationID"), by: try context.requireIdentity())
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
