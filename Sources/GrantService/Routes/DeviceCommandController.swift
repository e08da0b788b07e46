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
        let query = request.uri.queryParameters
        let after = try query.get("after").map { text -> Int64 in
            guard let value = Int64(text), value >= 0 else { throw APIError.badRequest("after must be a non-negative integer") }
            return value
        } ?? 0
        let limit = try query.get("limit").map { text -> Int in
            guard let value = Int(text), (1...Self.maximumPageSize).contains(value) else {
                throw APIError.badRequest("limit must be between 1 and \(Self.maximumPageSize)")
            }
            return value
        } ?? Self.defaultPageSize
        return try await commands.commands(of: caller.deviceID, after: after, limit: limit)
    }
}
