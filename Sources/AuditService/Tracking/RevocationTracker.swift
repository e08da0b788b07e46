import Foundation
import RescindCrypto
import RescindPostgres
import RescindProtocol
import RescindTracing
import Tracing

/// Follows each revocation's expected devices to completion, inside the caller's
/// transaction: acks move a device's state, the last one completes the revocation,
/// a failure or a missed deadline is reported.
///
/// Completion means every expected device applied (or had already applied) the change;
/// a failed device keeps the revocation open until it acks successfully.
struct RevocationTracker: Sendable {
    let auditLog: AuditLog
    let ackDeadline: Duration
    /// Where rejections go, within the quarantine's bounds.
    var rejections = RejectionLog()
    /// Bounds of the acks held before their revocation event.
    var heldAcks = HeldAckLimits()

    // MARK: Revocations

    /// Starts tracking; the deadline runs from the commit (the event's `occurred_at`). The trace
    /// context current here (the event's, when its message carried one) is kept for the
    /// revocation's re-issues to link to.
    /// - Returns: `false` when the revocation was already tracked.
    func track(_ event: RevocationEvent, on connection: PostgresConnection) async throws -> Bool {
        let trace = ServiceContext.current?.traceContext
        let inserted = try await connection.execute(
            """
            INSERT INTO revocations (event_id, family_member_id, owner_user_id, owner_agreement_public_key,
                                     revoked_user_id, revoked_by_user_id, new_fmk_version, records_reencrypted,
                                     reason, committed_at, deadline_at, traceparent, tracestate)
            VALUES (\(event.eventID), \(event.familyMemberID), \(event.ownerUserID), \(event.ownerAgreementPublicKey),
                    \(event.revokedUserID), \(event.revokedByUserID), \(event.newFMKVersion),
                    \(event.recordsReencrypted), \(event.reason), \(event.occurredAt),
                    \(event.occurredAt.addingTimeInterval(ackDeadline.seconds)), \(trace?.traceparent), \(trace?.storableTraceState))
            ON CONFLICT DO NOTHING
            """)
        guard inserted == 1 else { return false }
        for device in event.expectedDevices {
            try await connection.execute(
                """
                INSERT INTO revocation_devices (event_id, device_id, user_id, action, signing_public_key)
                VALUES (\(event.eventID), \(device.deviceID), \(device.userID), \(device.action),
                        \(device.signingPublicKey))
                ON CONFLICT DO NOTHING
                """)
        }
        return true
    }

    // MARK: Acks

    /// Verifies an ack against the key its revocation expects and applies it.
    /// - Returns: `false` for a duplicate (same ack id) that changed nothing.
    /// - Throws: `Rejection` when the ack is not from an expected device, is not signed by
    ///   it, or contradicts the revocation; nothing was changed then.
    func apply(
        _ message: SignedMessage<DeviceAck>, to revocation: RevocationRecord, on connection: PostgresConnection,
        into conclusions: inout Conclusions
    ) async throws -> Bool {
        let ack = message.payload
        func rejection(_ reason: String) -> Rejection {
            Rejection(
                reason, signer: message.signer, familyMemberID: revocation.familyMemberID, eventID: ack.eventID,
                deviceID: ack.deviceID)
        }
        guard message.signer == Self.expectedSigner(of: ack) else { throw rejection(MessageError.unknownSigner("").code) }
        guard
            let row = try await connection.query(
                """
                SELECT action, signing_public_key, state FROM revocation_devices
                WHERE event_id = \(ack.eventID) AND device_id = \(ack.deviceID) FOR UPDATE
                """
            ).first
        else { throw rejection("unknown_device") }
        let (action, keyBytes, state) = try row.decode(DeviceAction.self, [UInt8].self, DeviceAckState.self)
        guard let deviceKey = try? Ed25519.PublicKey(rawRepresentation: keyBytes) else {
            throw rejection(MessageError.badSignature.code)
        }
        if let refusal = Self.signatureRefusal(of: message, deviceKey: deviceKey) { throw rejection(refusal) }
        // A receipt (delivered, not now) and a failure report the version held before acting. A
        // device whose user was revoked by a later revocation before it rotated erased instead: it
        // is past this version holding no key at all (version 0), and answers the rotation (or its
        // re-issue) done, `already_applied` or `healed`; refusing that left the device expired and
        // the revocation open for ever (found by `rescind-dev chaos`).
        let erasedSince = ack.fmkVersion == 0 && (ack.outcome == .alreadyApplied || ack.outcome == .healed)
        let reachedVersion =
            action == .secureDeletion || ack.outcome == .failed || !ack.outcome.isFinal
            || ack.fmkVersion >= revocation.newFMKVersion || erasedSince
        guard ack.action == action, reachedVersion else { throw rejection("mismatched_ack") }

        let inserted = try await connection.execute(
            """
            INSERT INTO device_acks (ack_id, event_id, device_id, command_id, outcome, records_processed,
                                     fmk_version, duration_ms, error, acked_at, original_command_id, attempt)
            VALUES (\(ack.ackID), \(ack.eventID), \(ack.deviceID), \(ack.commandID), \(ack.outcome.rawValue),
                    \(ack.recordsProcessed), \(ack.fmkVersion), \(ack.durationMs), \(Self.bounded(ack.error)),
                    \(ack.ackedAt), \(ack.originalCommandID), \(ack.attempt))
            ON CONFLICT DO NOTHING
            """)
        guard inserted == 1 else { return false }
        // A device that already did its part stays done; its later acks are history only.
        guard !state.isDone else { return true }

        let newState = DeviceAckState(ack.outcome)
        guard ack.outcome.isFinal else {
            // A receipt: where the command is, not an answer. It moves a device only among
            // pending, delivered and not_now: a failed, overdue, re-issued or expired device
            // stays so (its re-issues go on; a receipt key, which whoever holds the data
            // directory has, cannot hide it). A receipt older than the state it would replace
            // changes nothing; one dated in the future counts as now, so that it cannot hold off
            // the receipts that follow it.
            try await connection.execute(
                """
                UPDATE revocation_devices
                SET state = \(newState), state_changed_at = LEAST(\(ack.ackedAt), now())
                WHERE event_id = \(ack.eventID) AND device_id = \(ack.deviceID)
                  AND state IN ('pending', 'delivered', 'not_now')
                  AND (state_changed_at IS NULL OR state_changed_at <= LEAST(\(ack.ackedAt), now()))
                """)
            return true
        }
        try await connection.execute(
            """
            UPDATE revocation_devices
            SET state = \(newState), ack_id = \(ack.ackID), acked_at = \(ack.ackedAt), ack_received_at = now(),
                state_changed_at = \(ack.ackedAt),
                records_processed = \(ack.recordsProcessed), fmk_version = \(ack.fmkVersion),
                duration_ms = \(ack.durationMs), error = \(Self.bounded(ack.error)),
                late = late OR state = 'overdue' OR now() > \(revocation.deadlineAt)
            WHERE event_id = \(ack.eventID) AND device_id = \(ack.deviceID)
            """)
        if newState == .failed {
            try await reportFailure(ack, of: revocation, on: connection, into: &conclusions)
        }
        try await completeIfDone(revocation, on: connection, into: &conclusions)
        return true
    }

    static func signer(of deviceID: UUID) -> String {
        "device:\(deviceID.uuidString.lowercased())"
    }

    /// Device-provided text is kept short: it is shown, never interpreted.
    static func bounded(_ text: String?) -> String? {
        text.map { String($0.prefix(500)) }
    }

    private func reportFailure(
        _ ack: DeviceAck, of revocation: RevocationRecord, on connection: PostgresConnection,
        into conclusions: inout Conclusions
    ) async throws {
        try conclusions.notify(
            AuditNotification(
                notificationID: UUID(), kind: .ackFailed, familyMemberID: revocation.familyMemberID,
                eventID: revocation.eventID, deviceID: ack.deviceID, error: Self.bounded(ack.error) ?? "unspecified",
                occurredAt: Timestamp.truncated(Date())))
        let device = try await devices(of: revocation.eventID, on: connection).filter { $0.deviceID == ack.deviceID }
        try await appendEntry(
            "ack_failed", for: revocation, source: ack.ackID, occurredAt: ack.ackedAt, devices: device,
            error: Self.bounded(ack.error), on: connection, into: &conclusions)
    }

    // MARK: Helpers

    /// A revocation's devices as they stand, for its audit entries (what each device processed).
    func devices(of eventID: UUID, on connection: PostgresConnection) async throws -> [AuditDetails.Device] {
        try await deviceRows(of: eventID, on: connection).map {
            AuditDetails.Device(
                deviceID: $0.device, userID: $0.user, action: $0.action, state: $0.state, ackedAt: $0.ackedAt,
                recordsProcessed: $0.records)
        }
    }

    /// A revocation's devices as they stand, for its `revocation_completed` (which acked late).
    func outcomes(of eventID: UUID, on connection: PostgresConnection) async throws -> [AuditNotification.DeviceOutcome] {
        try await deviceRows(of: eventID, on: connection).map {
            AuditNotification.DeviceOutcome(
                deviceID: $0.device, userID: $0.user, action: $0.action, state: $0.state, ackedAt: $0.ackedAt, late: $0.late)
        }
    }

    /// The `revocation_devices` rows of a revocation, by user then device.
    private func deviceRows(
        of eventID: UUID, on connection: PostgresConnection
    ) async throws -> [(device: UUID, user: UUID, action: DeviceAction, state: String, ackedAt: Date?, records: Int?, late: Bool)] {
        try await connection.query(
            """
            SELECT device_id, user_id, action, state, acked_at, records_processed, late FROM revocation_devices
            WHERE event_id = \(eventID) ORDER BY user_id, device_id
            """
        ).map { row in
            try row.decode(UUID.self, UUID.self, DeviceAction.self, String.self, Date?.self, Int?.self, Bool.self)
        }
    }

    func appendEntry(
        _ type: String, for revocation: RevocationRecord, source: UUID, occurredAt: Date,
        devices: [AuditDetails.Device], commitToLastAckMs: Int? = nil, error: String? = nil,
        on connection: PostgresConnection, into conclusions: inout Conclusions
    ) async throws {
        let details = AuditDetails(
            eventType: type, eventID: revocation.eventID, familyMemberID: revocation.familyMemberID,
            actorUserID: revocation.revokedByUserID, targetUserID: revocation.revokedUserID,
            fmkVersion: revocation.newFMKVersion, devicesAffected: devices, commitToLastAckMs: commitToLastAckMs,
            error: error)
        let entry = try await auditLog.append(
            .init(
                familyMemberID: revocation.familyMemberID, eventType: type, actorUserID: revocation.revokedByUserID,
                targetUserID: revocation.revokedUserID, details: details, occurredAt: occurredAt, sourceID: source,
                owner: revocation.owner),
            on: connection)
        if entry != nil { conclusions.auditEntries += 1 }
    }
}
