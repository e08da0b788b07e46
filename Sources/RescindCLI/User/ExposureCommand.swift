import Foundation
import RescindClient
import RescindProtocol

/// `rescind revocation E --exposure`: the sealed snapshot from the grant service, opened with
/// this profile's key, joined with the audit service's acknowledgements (as the owner).
enum ExposureCommand {
    static func run(eventID: UUID, profile: ProfileOptions, json: Bool) async throws {
        let session = try await profile.session()
        let exposure = try await session.revocationExposure(eventID)
        if json {
            print(String(decoding: try CanonicalJSON.encode(exposure), as: UTF8.self))
            return
        }
        let audit = AuditServiceClient(baseURL: try profile.auditServiceURL, grantService: session.client, tls: try profile.tls)
        let status: RevocationStatus?
        do {
            status = try await audit.revocation(eventID)
        } catch let error as GrantServiceError where error.status == 404 {
            status = nil  // not consumed yet
        }
        for line in ExposureReport(exposure: exposure, status: status).lines { print(line) }
    }
}
