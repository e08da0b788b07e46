import Hummingbird
import RescindServiceSupport

/// The audit service's own error cases (the shared ones live in RescindServiceSupport).
extension APIError {
    static let unauthenticated = APIError(
        .unauthorized, "unauthenticated", "a bearer token issued by the grant service is required")
    static let notOwner = APIError(.forbidden, "forbidden", "only the family member's owner may read its access log")
    static let monitoringUnauthenticated = APIError(
        .unauthorized, "unauthenticated",
        "the operator token or a family member owner's bearer token issued by the grant service is required")
    static let operatorOnly = APIError(.forbidden, "forbidden", "only the operator may read this")
    static let notYourFamilyMember = APIError(
        .forbidden, "forbidden", "only the family member's owner (or the operator) may follow its revocations")
    static let tooManyStreams = APIError(
        .serviceUnavailable, "too_many_streams", "this replica serves its maximum of event streams; retry later")
    static let unsignedChainHead = APIError(
        .internalServerError, "unsigned_chain_head", "this family member's chain head carries no signature")
    static let notYourDevice = APIError(
        .forbidden, "forbidden", "a report must name the user and device the bearer token belongs to")
    static let duplicateReport = APIError(
        .conflict, "duplicate_report", "a report with this report_id was already recorded; nothing changed")
    static let authenticationUnavailable = APIError(
        .serviceUnavailable, "authentication_unavailable", "the grant service cannot confirm the caller right now")
}
