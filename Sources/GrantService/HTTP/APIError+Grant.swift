import Hummingbird
import RescindServiceSupport

/// The grant service's own error cases (the shared ones live in RescindServiceSupport).
extension APIError {
    static let unauthenticated = APIError(.unauthorized, "unauthenticated", "a valid bearer token is required")
    /// The rules' violations, for the stores not yet moved onto `GrantRules` (one definition each).
    static let deviceRetired = GrantRules.deviceRetired.apiError
    static let staleIdentityKey = GrantRules.staleIdentityKey.apiError
    static func versionConflict(current: Int) -> APIError { GrantRules.versionConflict(current: current).apiError }
}
