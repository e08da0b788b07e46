import Foundation
import Hummingbird
import RescindObservability
import RescindProtocol
import RescindServiceSupport

/// Begin → upload batches → commit (or abandon), the stolen-device variant, and the rotation that
/// revokes nobody (the owner's stolen device), continued by the same upload, commit and abandon.
/// A staging belongs to the device that began it: upload, commit and abandon from any other
/// device, even the same user's, are 403 `staging_owned_by_other_device` (migration 0017).
struct RevocationController {
    let revocations: RevocationStore
    let maxUploadBytes: Int
    let metrics: GrantMetrics

    func addRoutes(to group: RouterGroup<GrantRequestContext>) {
        group.get("family-members/:familyMemberID/revocation-preview", use: preview)
        group.post("family-members/:familyMemberID/revocations", use: begin)
        group.post("users/:userID/revocations", use: beginForUser)
        group.post("family-members/:familyMemberID/rotations", use: beginRotation)
        // A child group of its own: middleware added to `group` itself would also apply
        // to every route registered on it afterwards (commit, abandon).
        let uploads = group.group().add(middleware: BodyLimitMiddleware(bytes: maxUploadBytes))
        uploads.put("revocations/:revocationID/records", use: upload)
        uploads.put("revocations/:revocationID/versions", use: uploadVersions)
        group.post("revocations/:revocationID/commit", use: commit)
        group.delete("revocations/:revocationID", use: abandon)
    }

    /// What revoking `?user=U` would do, changing nothing (the owner's alone).
    @Sendable func preview(_ request: Request, context: GrantRequestContext) async throws -> RevocationPreview {
        let caller = try context.requireIdentity()
        guard let text = request.uri.queryParameters.get("user"), let user = UUID(uuidString: text) else {
            throw APIError.badRequest("user must be a UUID")
        }
        return try await revocations.preview(try context.familyMemberID(), revoking: user, by: caller.userID)
    }

    @Sendable func begin(_ request: Request, context: GrantRequestContext) async throws -> EditedResponse<RevocationResponse> {
        let caller = try context.requireIdentity()
        let body = try await request.decode(as: BeginRevocationRequest.self, context: context)
        return EditedResponse(
            status: .created, response: try await revocations.begin(try context.familyMemberID(), by: caller, body))
    }

    @Sendable func beginForUser(_ request: Request, context: GrantRequestContext) async throws -> EditedResponse<RevocationList> {
        let caller = try context.requireIdentity()
        let body = try await request.decode(as: BeginUserRevocationRequest.self, context: context)
        let list = try await revocations.beginForUser(try context.uuidParameter("userID"), by: caller, body)
        return EditedResponse(status: .created, response: RevocationList(revocations: list))
    }

    @Sendable func beginRotation(_ request: Request, context: GrantRequestContext) async throws -> EditedResponse<RevocationResponse> {
        let caller = try context.requireIdentity()
        let body = try await request.decode(as: BeginRotationRequest.self, context: context)
        return EditedResponse(
            status: .created, response: try await revocations.beginRotation(try context.familyMemberID(), by: caller, body))
    }

    @Sendable func upload(_ request: Request, context: GrantRequestContext) async throws -> UploadBatchResponse {
        let caller = try context.requireIdentity()
        let body = try await BinaryRecordsCoding.uploadBatch(from: request, context: context)
        guard body.records.count <= 5000 else { throw APIError.payloadTooLarge(limit: maxUploadBytes) }
        return try await revocations.upload(try context.uuidParameter("revocationID"), by: caller, body)
    }

    /// The kept versions (restorable records) re-encrypted like the records, in JSON.
    @Sendable func uploadVersions(_ request: Request, context: GrantRequestContext) async throws -> UploadVersionsResponse {
        let caller = try context.requireIdentity()
        let body = try await request.decode(as: UploadVersionsRequest.self, context: context)
        guard body.versions.count <= 5000 else { throw APIError.payloadTooLarge(limit: maxUploadBytes) }
        return try await revocations.uploadVersions(try context.uuidParameter("revocationID"), by: caller, body)
    }

    @Sendable func commit(_ request: Request, context: GrantRequestContext) async throws -> RevocationCommitted {
        let caller = try context.requireIdentity()
        let body = try await request.decode(as: CommitRevocationRequest.self, context: context)
        let committed = try await revocations.commit(try context.uuidParameter("revocationID"), by: caller, body)
        metrics.revocationsCommitted.increment()
        metrics.recordsReencrypted.increment(by: Int64(committed.recordsReencrypted))
        context.logger.info(
            "revocation committed",
            metadata: [
                LogKey.eventID: "\(committed.eventID)", LogKey.familyMemberID: "\(committed.familyMemberID)",
                LogKey.fmkVersion: "\(committed.newFMKVersion)", LogKey.records: "\(committed.recordsReencrypted)",
                LogKey.devices: "\(committed.devicesNotified)",
            ])
        return committed
    }

    @Sendable func abandon(_ request: Request, context: GrantRequestContext) async throws -> HTTPResponse.Status {
        try await revocations.abandon(try context.uuidParameter("revocationID"), by: try context.requireIdentity())
        return .noContent
    }
}
