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

    /// 404 for an unknown event and for another user's alike: nothing says it exists.
    @Sendable func exposure(_ request: Request, context: GrantRequestContext) async throws -> SealedRevocationExposure {
        let caller = try context.requireIdentity()
        guard let text = context.parameters.get("revocationID"), let eventID = UUID(uuidString: text) else {
            throw APIError.badRequest("the revocation's event id must be a UUID")
        }
        guard let report = try await exposures.sealedReport(eventID, for: caller.userID) else {
            throw APIError.notFound("exposure report of this revocation")
        }
        return report
    }
}

extension SealedRevocationExposure: ResponseEncodable {}
