import Foundation
import Hummingbird
import RescindPostgres
import RescindServiceSupport

/// The monitoring page's counts per device state and its plot of commit-to-last-ack times
/// (`MonitoringSummary`, `AckTimePlot`), scoped as the revocation list is: the operator sees
/// every family member, an owner their own; `family_member_id` narrows either.
struct MonitoringSummaryController {
    let pool: PostgresConnectionPool
    let authorization: MonitoringAuthorization

    func addRoutes(to router: Router<BasicRequestContext>) {
        router.get("v1/monitoring/summary") { request, context in
            let scope = try await authorization.scope(of: request, logger: context.logger)
            let familyMemberID = try MonitoringController.uuid(request, "family_member_id")
            let summary = try await pool.withConnection { connection in
                if let familyMemberID { try await scope.requireAccess(to: familyMemberID, on: connection) }
                return try await MonitoringSummary.load(
                    familyMemberID: familyMemberID, ownerUserID: scope.ownerUserID, on: connection)
            }
            return try Response.json(summary)
        }
        router.get("v1/monitoring/ack-times.svg") { request, context in
            let scope = try await authorization.scope(of: request, logger: context.logger)
            let familyMemberID = try MonitoringController.uuid(request, "family_member_id")
            let svg = try await pool.withConnection { connection in
                if let familyMemberID { try await scope.requireAccess(to: familyMemberID, on: connection) }
                let summary = try await MonitoringSummary.load(
                    familyMemberID: familyMemberID, ownerUserID: scope.ownerUserID, on: connection)
                let points = try await MonitoringSummary.ackTimes(
                    familyMemberID: familyMemberID, ownerUserID: scope.ownerUserID, on: connection)
                return AckTimePlot.svg(points, p50: summary.ackTimes.p50Ms, p99: summary.ackTimes.p99Ms)
            }
            return Response(
                status: .ok,
                headers: [
                    .contentType: "image/svg+xml; charset=utf-8", .cacheControl: "no-store",
                    .contentSecurityPolicy: "default-src 'none'",
                ],
                body: .init(byteBuffer: ByteBuffer(string: svg)))
        }
    }
}
