import Foundation
import Hummingbird
import RescindProtocol
import RescindServiceSupport

/// Encrypted records and the incremental-sync feed.
struct RecordController {
    let records: RecordStore
    let checkIns: DeviceCheckIns
    static let defaultPageSize = 200
    static let maximumPageSize = 1000

    func addRoutes(to group: RouterGroup<GrantRequestContext>) {
        group.get("family-members/:familyMemberID/records", use: changes)
        group.put("family-members/:familyMemberID/records/:recordID", use: put)
        group.get("family-members/:familyMemberID/records/:recordID", use: get)
        group.delete("family-members/:familyMemberID/records/:recordID", use: delete)
    }

    @Sendable func put(_ request: Request, context: GrantRequestContext) async throws -> RecordResponse {
        let caller = try context.requireIdentity()
        let body = try await request.decode(as: PutRecordRequest.self, context: context)
        return try await records.put(try context.familyMemberID(), try context.uuidParameter("recordID"), body, by: caller)
    }

    @Sendable func get(_ request: Request, context: GrantRequestContext) async throws -> RecordResponse {
        try await records.get(
            try context.familyMemberID(), try context.uuidParameter("recordID"), for: try context.requireIdentity().userID)
    }

    @Sendable func delete(_ request: Request, context: GrantRequestContext) async throws -> HTTPResponse.Status {
        try await records.delete(
            try context.familyMemberID(), try context.uuidParameter("recordID"), by: try context.requireIdentity())
        return .noContent
    }

    /// JSON by default; binary (`BinaryRecords`) for clients that accept it. The device's
    /// check-in notes the position it was given up to.
    @Sendable func changes(_ request: Request, context: GrantRequestContext) async throws -> Response {
        let caller = try context.requireIdentity()
        let query = try PageQuery(
            request.uri.queryParameters, cursor: "since", defaultLimit: Self.defaultPageSize, maximumLimit: Self.maximumPageSize)
        let familyMemberID = try context.familyMemberID()
        let page = try await records.changes(familyMemberID, since: query.cursor, limit: query.limit, for: caller.userID)
        await checkIns.pageRead(page, of: familyMemberID, by: caller, logger: context.logger)
        return try BinaryRecordsCoding.response(page, for: request, context: context)
    }
}
