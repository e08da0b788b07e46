import Foundation
import RescindCrypto
import RescindPostgres
import RescindProtocol

extension InboundMessageHandler {
    /// A committed revocation: track its devices, log it, and apply acks that arrived first.
    func revocationEvent(
        _ bytes: Data?, at position: MessagePosition, on connection: PostgresConnection,
        into conclusions: inout Conclusions
    ) async throws {
        let message = try verifiedGrantMessage(bytes, schema: RevocationEvent.schema, as: RevocationEvent.self)
        let event = message.payload
        let owner = try ownerKey(event.ownerAgreementPublicKey, signer: message.signer)
        guard event.expectedDevices.allSatisfy({ $0.signingPublicKey.count == Ed25519.publicKeyByteCount }) else {
            throw Rejection("malformed", signer: message.signer, familyMemberID: event.familyMemberID, eventID: event.eventID)
        }
        guard try await firstTime(event.eventID, kind: "revocation", familyMemberID: event.familyMemberID, on: connection)
        else { return }
        try await updateOwner(
            event.familyMemberID, owner: event.ownerUserID, key: event.ownerAgreementPublicKey, since: event.occurredAt,
            on: connection)
        _ = try await tracker.track(event, on: connection)
        // A rotation that revokes nobody (the owner's stolen device) is logged as such.
        let eventType = event.revokedUserID == nil ? "fmk_rotated" : "access_revoked"
        let details = AuditDetails(
            eventType: eventType, eventID: event.eventID, familyMemberID: event.familyMemberID,
            actorUserID: event.revokedByUserID, targetUserID: event.revokedUserID, fmkVersion: event.newFMKVersion,
            reason: event.reason, recordsReEncrypted: event.recordsReencrypted,
            devicesAffected: event.expectedDevices.map {
                AuditDetails.Device(deviceID: $0.deviceID, userID: $0.userID, action: $0.action)
            },
            durationMs: event.clientDurationMs)
        try await append(
            .init(
                familyMemberID: event.familyMemberID, eventType: eventType, actorUserID: event.revokedByUserID,
                targetUserID: event.revokedUserID, details: details, occurredAt: event.occurredAt,
                sourceID: event.eventID, owner: owner),
            on: connection, into: &conclusions)

        guard let revocation = try await RevocationRecord.load(event.eventID, lock: true, on: connection) else { return }
        try await tracker.applyHeldAcks(for: revocation, on: connection, into: &conclusions)
        // No device to wait for (or all acks were already here): complete now.
        try await tracker.completeIfDone(
            try await RevocationRecord.load(event.eventID, on: connection) ?? revocation, on: connection,
            into: &conclusions)
        try await RevocationTracker.streamStatus(of: event.eventID, on: connection, into: &conclusions)
    }

    /// Any other access change: one audit entry, and the owner it names.
    func accessEvent(_ bytes: Data?, on connection: PostgresConnection, into conclusions: inout Conclusions) async throws {
        let message = try verifiedGrantMessage(bytes, schema: AccessEvent.schema, as: AccessEvent.self)
        let event = message.payload
        let owner = try ownerKey(event.ownerAgreementPublicKey, signer: message.signer)
        guard try await firstTime(event.eventID, kind: event.kind.rawValue, familyMemberID: event.familyMemberID, on: connection)
        else { return }
        try await updateOwner(
            event.familyMemberID, owner: event.ownerUserID, key: event.ownerAgreementPublicKey, since: event.occurredAt,
            on: connection)
        let details = AuditDetails(
            eventType: event.kind.rawValue, eventID: event.eventID, familyMemberID: event.familyMemberID,
            actorUserID: event.actorUserID, targetUserID: event.targetUserID, fmkVersion: event.fmkVersion,
            facts: event.details.isEmpty ? nil : event.details)
        try await append(
            .init(
                familyMemberID: event.familyMemberID, eventType: event.kind.rawValue, actorUserID: event.actorUserID,
                targetUserID: event.targetUserID, details: details, occurredAt: event.occurredAt,
                sourceID: event.eventID, owner: owner),
            on: connection, into: &conclusions)
        var shown = event
        shown.ownerAgreementPublicKey = Data()
        conclusions.streamEvents.append(try StreamEvent(.accessEvent, familyMemberID: event.familyMemberID, payload: shown))
    }

    // MARK: Helpers

    /// The owner's X25519 key, which details are sealed to; a bad one makes the event malformed.
    func ownerKey(_ bytes: Data, signer: String) throws -> X25519.PublicKey {
        guard let key = try? X25519.PublicKey(rawRepresentation: [UInt8](bytes)) else {
            throw Rejection("malformed", signer: signer)
        }
        return key
    }

    /// Claims the event id: `false` when it was processed before (a redelivery).
    func firstTime(_ eventID: UUID, kind: String, familyMemberID: UUID, on connection: PostgresConnection) async throws -> Bool {
        try await connection.execute(
            """
            INSERT INTO processed_events (event_id, kind, family_member_id)
            VALUES (\(eventID), \(kind), \(familyMemberID)) ON CONFLICT DO NOTHING
            """) == 1
    }

    /// Remembers the latest owner: events of one family member can arrive out of order
    /// across topics, so an older event never overwrites a newer owner.
    func updateOwner(_ familyMemberID: UUID, owner: UUID, key: Data, since: Date, on connection: PostgresConnection) async throws {
        try await connection.execute(
            """
            INSERT INTO family_members (family_member_id, owner_user_id, owner_agreement_public_key, owner_since)
            VALUES (\(familyMemberID), \(owner), \(key), \(since))
            ON CONFLICT (family_member_id) DO UPDATE
            SET owner_user_id = EXCLUDED.owner_user_id, owner_agreement_public_key = EXCLUDED.owner_agreement_public_key,
                owner_since = EXCLUDED.owner_since
            WHERE family_members.owner_since <= EXCLUDED.owner_since
            """)
    }

    func append(_ draft: AuditLog.Draft, on connection: PostgresConnection, into conclusions: inout Conclusions) async throws {
        if try await auditLog.append(draft, on: connection) != nil { conclusions.auditEntries += 1 }
    }
}
