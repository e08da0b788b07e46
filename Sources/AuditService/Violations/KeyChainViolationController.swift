import Foundation
import Hummingbird
import NIOFoundationCompat
import RescindPostgres
import RescindProtocol
import RescindServiceSupport

/// Key chain violations over HTTP: the CLI reports one as the user's device (the bearer
/// token the grant service issued to that device, confirmed with `GET /v1/me`); the operator
/// (or an owner, for the family members they own) lists the recent ones.
struct KeyChainViolationController {
    let pool: PostgresConnectionPool
    let grantService: GrantServiceLink?
    let monitoring: MonitoringAuthorization
    let intake: KeyChainViolationIntake
    let writer: ConclusionWriter
    let metrics: AuditMetrics

    /// A report is a few hundred bytes; anything far larger is refused before it is parsed.
    static let maxBodyBytes = 16 * 1024

    func addRoutes(to router: Router<BasicRequestContext>) {
        router.post("v1/key-chain-violations") { request, context in
            guard let token = request.bearerToken else { throw APIError.unauthenticated }
            guard let grantService else { throw APIError.authenticationUnavailable }
            guard let caller = try await grantService.introspectDevice(token, logger: context.logger) else {
                throw APIError.unauthenticated
            }
            let violation = try await Self.decode(request)
            guard violation.reporterUserID == caller.userID, violation.reporterDeviceID == caller.deviceID else {
                throw APIError.notYourDevice
            }
            let conclusions = try await pool.transaction { connection in
                var conclusions = Conclusions()
                guard try await intake.record(violation, verification: .deviceToken, on: connection, into: &conclusions)
                else { throw APIError.duplicateReport }
                try await writer.write(conclusions, on: connection)
                return conclusions
            }
            if conclusions.auditEntries > 0 { metrics.auditEntries.increment(by: Int64(conclusions.auditEntries)) }
            metrics.keyChainViolation(verification: AuditNotification.ReporterVerification.deviceToken.rawValue)
            return try Response.json(
                KeyChainViolationReceipt(reportID: violation.reportID, verification: .deviceToken), status: .created)
        }
        router.get("v1/key-chain-violations") { request, context in
            let scope = try await monitoring.scope(of: request, logger: context.logger)
            let familyMemberID = try MonitoringController.uuid(request, "family_member_id")
            let limit = try AccessLogController.integer(request, "limit", default: 50, range: 1...500)
            let violations = try await pool.withConnection { connection in
                if let familyMemberID { try await scope.requireAccess(to: familyMemberID, on: connection) }
                return try await KeyChainViolationIntake.recent(
                    ownerUserID: scope.ownerUserID, familyMemberID: familyMemberID, limit: Int(limit), on: connection)
            }
            return try Response.json(KeyChainViolationList(violations: violations))
        }
    }

    /// The report, held to the same rules as one read from Kafka: only fields the payload has
    /// (nothing unknown rides along), every field within `MessageLimits`. Unlike a signed message
    /// it need not be in canonical form (ids in either case, timestamps without milliseconds):
    /// the audit service keeps and forwards the canonical form it decoded.
    /// - Throws: 413 for a body over `maxBodyBytes`, 400 `bad_request` for one that is not a
    ///   report, 422 `invalid_field` naming the first field outside its limits.
    static func decode(_ request: Request) async throws -> KeyChainViolation {
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: maxBodyBytes)
        } catch {
            throw APIError.payloadTooLarge(limit: maxBodyBytes)
        }
        let data = Data(buffer: buffer)
        guard let violation = try? CanonicalJSON.decode(KeyChainViolation.self, from: data),
            let received = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            CanonicalJSON.namesOnlyKnownFields(received, violation)
        else {
            throw APIError.badRequest("the body is not a key chain violation report (rescind.key_chain_violation.v1 payload)")
        }
        do {
            try violation.validate()
        } catch {
            throw APIError.unprocessable(error.code, error.description)
        }
        return violation
    }
}
