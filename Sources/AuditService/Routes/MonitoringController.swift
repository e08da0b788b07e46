import Foundation
import Hummingbird
import RescindPostgres
import RescindProtocol
import RescindServiceSupport

/// What the monitoring page reads: recent revocations with per-device state, recent
/// rejections, and the page itself. Every data route needs a credential: the operator
/// sees everything; an owner (a grant-service bearer token) sees the revocations of the
/// family members they own now, and no rejections (whose origin may be anyone's).
/// The page and its script carry no data and load without one.
struct MonitoringController {
    let pool: PostgresConnectionPool
    let authorization: MonitoringAuthorization

    /// Who the page signed in as.
    struct Credential: Encodable {
        let scope: String
        let userID: UUID?

    }

    /// A refused message as the page lists it.
    struct RejectedMessage: Encodable {
        let topic: String
        let partition: Int32
        let offset: Int64
        let reason: String
        let signer: String?
        let familyMemberID: UUID?
        let eventID: UUID?
        let deviceID: UUID?
        let receivedAt: Date

    }

    /// Rejections counted in the last 24 hours per topic and reason: every one, stored or not
    /// (a flood beyond the hourly rows is counted here, not listed above).
    struct RejectionCount: Encodable {
        let topic: String
        let reason: String
        let rejected: Int
        let stored: Int
    }

    struct RejectedMessageList: Encodable {
        let rejections: [RejectedMessage]
        let counts: [RejectionCount]
    }

    struct GovernanceNoticeList: Encodable {
        let notices: [GovernanceNotice]
    }

    func addRoutes(to router: Router<BasicRequestContext>) {
        router.get("v1/monitoring/credential") { request, context in
            let scope = try await authorization.scope(of: request, logger: context.logger)
            return try Response.json(
                Credential(scope: scope == .operator ? "operator" : "owner", userID: scope.ownerUserID))
        }
        router.get("v1/revocations") { request, context in
            let scope = try await authorization.scope(of: request, logger: context.logger)
            let familyMemberID = try Self.uuid(request, "family_member_id")
            let limit = try AccessLogController.integer(request, "limit", default: 50, range: 1...500)
            let state = try MonitoringSummary.state(request.uri.queryParameters["state"])
            let list = try await pool.withConnection { connection in
                if let familyMemberID { try await scope.requireAccess(to: familyMemberID, on: connection) }
                // Position first: whatever commits after it is replayed by the stream.
                let position = try await EventStreamHub.position(on: connection)
                let revocations = try await RevocationRecord.statuses(
                    eventID: nil, familyMemberID: familyMemberID, ownerUserID: scope.ownerUserID, deviceState: state,
                    limit: Int(limit), on: connection)
                let counts = Dictionary(grouping: revocations.flatMap(\.devices), by: \.state).mapValues(\.count)
                return RevocationStatusList(revocations: revocations, streamPosition: position, deviceStates: counts)
            }
            return try Response.json(list)
        }
        router.get("v1/revocations/:eventID") { request, context in
            let scope = try await authorization.scope(of: request, logger: context.logger)
            let eventID = try context.parameters.require("eventID", as: UUID.self)
            // Another owner's revocation is indistinguishable from an unknown one.
            let status = try await pool.withConnection { connection in
                try await RevocationRecord.statuses(
                    eventID: eventID, familyMemberID: nil, ownerUserID: scope.ownerUserID, limit: 1, on: connection
                ).first
            }
            guard let status else { throw APIError.notFound("revocation") }
            return try Response.json(status)
        }
        router.get("v1/rejections") { request, context in
            try await authorization.scope(of: request, logger: context.logger).requireOperator()
            let limit = try AccessLogController.integer(request, "limit", default: 20, range: 1...500)
            let (rows, counts) = try await pool.withConnection { connection in
                let rows = try await connection.query(
                    """
                    SELECT topic, partition, kafka_offset, reason, signer, family_member_id, event_id, device_id, received_at
                    FROM rejected_messages ORDER BY rejection_id DESC LIMIT \(limit)
                    """)
                let counts = try await connection.query(
                    """
                    SELECT topic, reason, sum(rejected)::bigint, sum(stored)::bigint FROM rejection_tallies
                    WHERE window_start >= date_trunc('hour', now() - interval '23 hours')
                    GROUP BY topic, reason ORDER BY 3 DESC, topic, reason LIMIT 200
                    """
                ).map { row in
                    let (topic, reason, rejected, stored) = try row.decode(String.self, String.self, Int.self, Int.self)
                    return RejectionCount(topic: topic, reason: reason, rejected: rejected, stored: min(stored, rejected))
                }
                return (rows, counts)
            }
            let rejections = try rows.map { row in
                let (topic, partition, offset, reason, signer, familyMemberID, eventID, deviceID, receivedAt) = try row.decode(
                    String.self, Int32.self, Int64.self, String.self, String?.self, UUID?.self, UUID?.self, UUID?.self,
                    Date.self)
                return RejectedMessage(
                    topic: topic, partition: partition, offset: offset, reason: reason, signer: signer,
                    familyMemberID: familyMemberID, eventID: eventID, deviceID: deviceID, receivedAt: receivedAt)
            }
            return try Response.json(RejectedMessageList(rejections: rejections, counts: counts))
        }
        // Changes to who a user is, as the grant service announced them: the operator sees every
        // user's, an owner their own.
        router.get("v1/governance-notices") { request, context in
            let scope = try await authorization.scope(of: request, logger: context.logger)
            let limit = try AccessLogController.integer(request, "limit", default: 50, range: 1...500)
            let notices = try await pool.withConnection { connection in
                try await InboundMessageHandler.governanceNotices(of: scope.ownerUserID, limit: Int(limit), on: connection)
            }
            return try Response.json(GovernanceNoticeList(notices: notices))
        }
        for path in ["", "monitor"] {
            router.get(RouterPath(path)) { _, _ in MonitoringPage.response(for: .html) }
        }
        router.get("monitor.js") { _, _ in MonitoringPage.response(for: .script) }
    }

    static func uuid(_ request: Request, _ name: String) throws -> UUID? {
        guard let text = request.uri.queryParameters[name[...]] else { return nil }
        guard let id = UUID(uuidString: String(text)) else { throw APIError.badRequest("\(name) must be a UUID") }
        return id
    }
}
