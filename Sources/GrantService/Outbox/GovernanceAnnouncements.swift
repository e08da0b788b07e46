import Foundation
import RescindPostgres
import RescindProtocol

extension OutboxWriter {
    /// Announces a governance change inside the transaction that makes it (`GovernanceNotice`):
    /// a signed copy on `device_commands` for every active device of the user except `actor`
    /// (the device that acted already knows), plus `alsoTo` (a retired device hears of its own
    /// retirement); for an identity rotation or an enrolment, a copy for every active device of
    /// each owner who shares a family member with the user (they pin the user's keys, and a
    /// thief enrolling under a grantee reads what they shared); and one copy on `access_events`
    /// keyed by the user, for the audit service.
    ///
    /// - Parameter notice: the notice without an addressee; its `occurredAt` is replaced by the
    ///   transaction's time (the service's clock is the database's).
    func announce(
        _ notice: GovernanceNotice, sparing actor: UUID?, alsoTo extra: UUID? = nil, on connection: PostgresConnection
    ) async throws {
        let toOwners = notice.change == .rotateIdentity || notice.change == .enrolDevice
        var recipients: [(device: UUID, audience: GovernanceNotice.Audience)] = []
        var occurredAt = notice.occurredAt
        for row in try await connection.query(
            """
            SELECT d.device_id, 'user', now() FROM devices d
            WHERE d.user_id = \(notice.userID) AND (d.retired_at IS NULL OR d.device_id = \(extra))
              AND d.device_id IS DISTINCT FROM \(actor)
            UNION
            SELECT DISTINCT d.device_id, 'owner', now()
            FROM access_grants g
            JOIN family_members f ON f.family_member_id = g.family_member_id
            JOIN devices d ON d.user_id = f.owner_user_id AND d.retired_at IS NULL
            WHERE \(toOwners) AND g.grantee_user_id = \(notice.userID) AND g.revoked_at IS NULL
              AND f.owner_user_id <> \(notice.userID)
            UNION
            SELECT NULL, NULL, now()
            """)
        {
            let (device, audience, now) = try row.decode(UUID?.self, String?.self, Date.self)
            occurredAt = now
            if let device, let audience = audience.flatMap(GovernanceNotice.Audience.init(rawValue:)) {
                recipients.append((device, audience))
            }
        }
        var announced = notice
        announced.occurredAt = occurredAt
        try await enqueue(
            announced, schema: GovernanceNotice.schema, topic: .accessEvents, key: notice.userID, on: connection)
        guard !recipients.isEmpty else { return }
        let envelopes = try recipients.map {
            try SignedMessage(
                schema: GovernanceNotice.schema, signer: Self.signer, payload: announced.addressed(to: $0.device, as: $0.audience),
                key: signingKey
            ).encoded()
        }
        try await connection.execute(
            """
            INSERT INTO outbox (topic, message_key, payload)
            SELECT \(topicPrefix + Topic.deviceCommands.rawValue), m.key, m.payload
            FROM unnest(\(PostgresArray(recipients.map { $0.device.uuidString.lowercased() })), \(PostgresArray(envelopes)))
                 AS m (key, payload)
            """)
    }
}

extension GovernanceNotice {
    /// The notice of a governed operation's new state (`occurredAt` is set when announced).
    init(_ operation: GovernedOperation, actor: UUID?) {
        let change: Change =
            switch operation.kind {
            case .rotateIdentity: .rotateIdentity
            case .transferOwnership: .transferOwnership
            case .setRecovery: .setRecovery
            }
        self.init(
            userID: operation.userID, change: change, state: operation.state, operationID: operation.operationID,
            familyMemberID: operation.transfer?.familyMemberID, actorDeviceID: actor, decidedBy: operation.decidedBy,
            effectiveAt: operation.state == .pending ? operation.effectiveAt : nil, occurredAt: Date())
    }

    /// The notice of an immediate device change; an enrolment by another device is provisional
    /// until `provisionalUntil` (`IdentityStore.retire`).
    init(_ change: Change, device: UUID, of userID: UUID, actor: UUID?, provisionalUntil: Date? = nil) {
        self.init(
            userID: userID, change: change, state: .applied, subjectDeviceID: device, actorDeviceID: actor,
            decidedBy: actor == nil ? .recoveryKey : .device, effectiveAt: provisionalUntil, occurredAt: Date())
    }
}
