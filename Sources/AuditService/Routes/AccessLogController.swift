import Foundation
import Hummingbird
import RescindPostgres
import RescindServiceSupport

/// The owner's access log (the guide's "Settings > Access Log"), sealed entries only:
/// the client opens `encrypted_details` with the owner's X25519 key.
struct AccessLogController {
    let pool: PostgresConnectionPool
    let authorization: OwnerAuthorization
    let verifier: AuditChainVerifier
    let auditLog: AuditLog

    static let maxPageSize = 200

    func addRoutes(to router: Router<BasicRequestContext>) {
        let familyMember = router.group("v1/family-members/:familyMemberID")
        familyMember.get("access-log") { request, context in
            let familyMemberID = try context.parameters.require("familyMemberID", as: UUID.self)
            _ = try await authorization.requireOwner(of: familyMemberID, request: request, logger: context.logger)
            let limit = try Self.integer(request, "limit", default: 50, range: 1...Int64(Self.maxPageSize))
            let before = try Self.integer(request, "before", default: Int64.max, range: 1...Int64.max)
            let page = try await pool.withConnection { connection in
                try await AuditLog.page(
                    familyMemberID: familyMemberID, before: before, limit: Int(limit), on: connection)
            }
            return try Response.json(page)
        }
        // The signed head: a reader checks the entries up to it with the pinned key.
        familyMember.get("access-log/head") { request, context in
            let familyMemberID = try context.parameters.require("familyMemberID", as: UUID.self)
            _ = try await authorization.requireOwner(of: familyMemberID, request: request, logger: context.logger)
            let head = try await pool.withConnection { try await auditLog.head(of: familyMemberID, on: $0) }
            guard let head else { throw APIError.unsignedChainHead }
            return try Response.json(head)
        }
        familyMember.get("access-log/verification") { request, context in
            let familyMemberID = try context.parameters.require("familyMemberID", as: UUID.self)
            _ = try await authorization.requireOwner(of: familyMemberID, request: request, logger: context.logger)
            let report = try await pool.withConnection { try await verifier.verify(familyMemberID: familyMemberID, on: $0) }
            return try Response.json(report)
        }
    }

    static func integer(_ request: Request, _ name: String, default value: Int64, range: ClosedRange<Int64>) throws -> Int64 {
        guard let text = request.uri.queryParameters[name[...]] else { return value }
        guard let number = Int64(String(text)), range.contains(number) else {
            throw APIError.badRequest("\(name) must be an integer in \(range.lowerBound)...\(range.upperBound)")
        }
        return number
    }
}
