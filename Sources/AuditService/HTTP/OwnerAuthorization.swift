import Foundation
import Hummingbird
import Logging
import RescindPostgres
import RescindServiceSupport

/// Who may read a family member's access log: its current owner, as the latest event
/// names them. The audit service has no users: the caller presents the bearer token the
/// grant service issued them, and the grant service says whose it is (`GET /v1/me`).
struct OwnerAuthorization: Sendable {
    /// `nil` when no grant-service URL is configured: the access log is then unavailable.
    let grantService: GrantServiceLink?
    let pool: PostgresConnectionPool

    /// - Returns: the owner's user id.
    /// - Throws: `APIError` 401 (no or refused token), 403 (not the owner), 404 (unknown
    ///   family member), 503 (the grant service cannot answer).
    func requireOwner(of familyMemberID: UUID, request: Request, logger: Logger) async throws -> UUID {
        guard let token = request.bearerToken else { throw APIError.unauthenticated }
        guard let grantService else { throw APIError.authenticationUnavailable }
        guard let userID = try await grantService.introspect(token, logger: logger) else { throw APIError.unauthenticated }
        let owner = try await pool.withConnection { connection in
            try await connection.query(
                "SELECT owner_user_id FROM family_members WHERE family_member_id = \(familyMemberID)"
            ).first?.decode(UUID.self, column: 0)
        }
        guard let owner else { throw APIError.notFound("family member") }
        guard owner == userID else { throw APIError.notOwner }
        return owner
    }
}
