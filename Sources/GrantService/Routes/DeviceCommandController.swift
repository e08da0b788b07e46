import Foundation
import Hummingbird
import RescindProtocol
import RescindServiceSupport

/// `GET /v1/devices/self/commands?after=&limit=`: the calling device's own commands, so an
/// agent that missed one on `device_commands` (offline beyond retention) fetches it at check-in.
struct DeviceCommandController {
    static let defaultPageSize = 100
    static let maximumPageSize = 500

    let commands: DeviceCommandStore

    func addRoutes(to group: RouterGroup<GrantRequestContext>) {
        group.get("devices/self/commands", use: list)
    }

    @Sendable func list(_ request: Request, context: GrantRequestContext) async throws -> DeviceCommandList {
        let caller = try context.requireIdentity()
        let page = try PageQuery(
            request.uri.queryParameters, cursor: "after", defaultLimit: Self.defaultPageSize, maximumLimit: Self.maximumPageSize)
        return try await commands.commands(of: caller.deviceID, after: page.cursor, limit: page.limit)
    }
}
