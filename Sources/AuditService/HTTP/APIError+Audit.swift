import Hummingbird
import RescindServiceSupport

/// The audit service's own error cases (the shared ones live in RescindServiceSupport).
extension APIError {
    static let unauthenticated = APIError(
        .unauthorized, "unauthenticated", "a bearer token issued by the grant service is required")
    static let notOwner = APIError(.forbidden, "forbidden", "only the family member's owner may read its access log")
    static let authenticationUnavailable = APIError(
        .serviceUnavailable, "authentication_unavailable", "the grant service cannot confirm the caller right now")
}
