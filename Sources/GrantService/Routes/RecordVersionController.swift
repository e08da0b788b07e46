import Foundation
import Hummingbird
import RescindProtocol
import RescindServiceSupport

/// Restorable records: the family member's owner lists the deleted and overwritten versions it
/// keeps (its trash) and restores one (`RecordVersionStore`).
struct RecordVersionController {
    let versions: RecordVersionStore

    func addRoutes(to group: RouterGroup<GrantRequestContext>) {
        group.get("family-members/:familyMemberID/record-versions", use: list)
        group.post("family-members/:familyMemberID/records/:recordID/restore", use: restore)
    }

    @Sendable func list(_ request: Request, context: GrantRequestContext) async throws -> RecordVersionList {
        try await versions.list(try context.familyMemberID(), by: try context.requireIdentity())
    }

    @Sendable func restore(_ request: Request, context: GrantRequestContext) async throws -> RecordResponse {
        let caller = try context.requireIdentity()
        let body = try await request.decode(as: RestoreRecordRequest.self, context: context)
        return try await versions.restore(try context.familyMemberID(), try context.uuidParameter("recordID"), body, by: caller)
    }
}
