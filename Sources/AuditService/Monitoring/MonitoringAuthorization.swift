import Foundation
import Hummingbird
import Logging
import RescindServiceSupport

/// Who is asking for monitoring data: the operator (the token in
/// `RESCIND_AUDIT_OPERATOR_TOKEN_FILE`) or an owner (a bearer token the grant service
/// issued, confirmed by `GET /v1/me` as the access log does). Anything else is a 401.
struct MonitoringAuthorization: Sendable {
    let operatorToken: OperatorToken?
    /// `nil` when no grant-service URL is configured: only the operator can sign in.
    let grantService: GrantServiceLink?
    let metrics: AuditMetrics?

    /// - Throws: `APIError` 401 (no or refused credential), 503 (the grant service cannot answer).
    func scope(of request: Request, logger: Logger) async throws -> MonitoringScope {
        do {
            return try await identify(request, logger: logger)
        } catch let error as APIError where error.status == .unauthorized {
            metrics?.monitoringUnauthenticated.increment()
            throw error
        }
    }

    private func identify(_ request: Request, logger: Logger) async throws -> MonitoringScope {
        guard let token = request.bearerToken else { throw APIError.monitoringUnauthenticated }
        if let operatorToken, operatorToken.matches(token) { return .operator }
        guard let grantService else { throw APIError.monitoringUnauthenticated }
        guard let userID = try await grantService.introspect(token, logger: logger) else { throw APIError.monitoringUnauthenticated }
        return .owner(userID)
    }
}
