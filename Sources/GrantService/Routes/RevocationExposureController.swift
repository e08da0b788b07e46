import Foundation
import Hummingbird
import RescindProtocol
import RescindServiceSupport

/// A revocation's exposure report (`RevocationExposureStore`), sealed to the owner who committed it.
struct RevocationExposureController {
    let exposures: RevocationExposureStore

    func addRoutes(to group: RouterGroup<GrantRequestContext>) {
        // The same parameter name as the other revocation routes: the router's tree has one
        // parameter node per position.
        group.get("revocations/:revocationID/exposure", use: exposure)
    }

    /// 404 for an unknown event and for another user's alike: nothing says it exists. To the owner
    /// who committed a rotation (it revoked nobody: no report was taken), 404
    /// `rotation_has_no_exposure_report`, saying where the stolen device's exposure is.
    @Sendable func exposure(_ request: Request, context: GrantRequestContext) async throws -> SealedRevocationExposure {
        let caller = try context.requireIdentity()
        guard let text = context.parameters.get("revocationID"), let eventID = UUID(uuidString: text) else {
            throw APIError.badRequest("the revocation's event id must be a UUID")
        }
        guard let report = try await exposures.sealedReport(eventID, for: caller.userID) else {
            if try await exposures.isRotation(eventID, committedBy: caller.userID) { throw Self.rotationHasNoReport }
            throw APIError.notFound("exposure report of this revocation")
        }
        return report
    }

    static let rotationHasNoReport = APIError(
        .notFound, "rotation_has_no_exposure_report",
        "this event is a rotation: it revoked nobody, so no exposure report was taken; what your stolen device could "
            + "hold is its entry in `rescind device list` (the last FMK version and change-feed position it fetched per "
            + "family member), and everything re-encrypted by the rotation is under an FMK it never had")
}

extension SealedRevocationExposure: ResponseEncodable {}
