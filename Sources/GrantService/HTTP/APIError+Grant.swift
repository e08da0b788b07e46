import Hummingbird
import RescindServiceSupport

/// The grant service's own error cases (the shared ones live in RescindServiceSupport).
extension APIError {
    static let unauthenticated = APIError(.unauthorized, "unauthenticated", "a valid bearer token is required")
    static let deviceRetired = APIError(
        .unauthorized, "device_retired", "this device was retired by its user; it can no longer authenticate")
    static let staleIdentityKey = APIError(
        .conflict, "stale_identity_key",
        "the FMK was wrapped to a key that is not the grantee's current one (their identity was rotated); fetch it again")
    static func versionConflict(current: Int) -> APIError {
        APIError(.conflict, "version_conflict", "the family member is at FMK version \(current); refresh and retry")
    }
}
