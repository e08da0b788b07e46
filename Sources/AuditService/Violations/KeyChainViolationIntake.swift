import Foundation
import RescindCrypto
import RescindPostgres
import RescindProtocol

/// Stores a key chain violation a client reported, once per report id, inside the caller's
/// transaction: the row, an entry in the owner's sealed audit log (when the reporter is
/// attributable and the family member's owner is known), and a `key_chain_violation`
/// notification.
///
/// Reports signed by a device the service has no key for (`unverified_device`) are stored
/// and shown, but kept out of the owner's log: anyone who can write to `device_acks` could
/// have sent them.
struct KeyChainViolationIntake: Sendable {
    let auditLog: AuditLog

    /// The rejection of a report whose id was already recorded (a replay): nothing changes.
    static let duplicate = "duplicate_report"

    /// - Returns: `false` when the report id was already recorded; nothing was written then.
    func record(
        _ violation: KeyChainViolation, verification: AuditNotification.ReporterVerification,
        on connection: PostgresConnection, into conclusions: inout Conclusions
    ) async throws -> Bool {
        let inserted = try await connection.execute(
            """
            INSERT INTO key_chain_violations (report_id, code, family_member_id, reporter_user_id, reporter_device_id,
                                              offered_fmk_version, statement_seq, verified_seq, detail, detected_at,
                                              verification)
            VALUES (\(violation.reportID), \(violation.code.rawValue), \(violation.familyMemberID),
                    \(violation.reporterUserID), \(violation.reporterDeviceID), \(violation.offeredFMKVersion),
                    \(violation.statementSeq), \(violation.verifiedSeq), \(violation.detail), \(violation.detectedAt),
                    \(verification.rawValue))
            ON CONFLICT (report_id) DO NOTHING
            """)
        guard inserted == 1 else { return false }
        if verification != .unverifiedDevice, let owner = try await ownerKey(of: violation.familyMemberID, on: connection) {
            let details = AuditDetails(
                eventType: "key_chain_violation", eventID: violation.reportID, familyMemberID: violation.familyMemberID,
                actorUserID: violation.reporterUserID, targetUserID: nil, fmkVersion: violation.offeredFMKVersion,
                violation: violation)
            let entry = try await auditLog.append(
                .init(
                    familyMemberID: violation.familyMemberID, eventType: "key_chain_violation",
                    actorUserID: violation.reporterUserID, targetUserID: nil, details: details,
                    occurredAt: violation.detectedAt, sourceID: violation.reportID, owner: owner),
                on: connection)
            if entry != nil { conclusions.auditEntries += 1 }
        }
        try conclusions.notify(
            AuditNotification(
                notificationID: UUID(), kind: .keyChainViolation, familyMemberID: violation.familyMemberID, eventID: nil,
                deviceID: violation.reporterDeviceID, violation: violation, reporterVerification: verification,
                occurredAt: Timestamp.truncated(Date())))
        return true
    }

    /// The owner's X25519 key as the latest event named it, `nil` for a family member never heard of.
    private func ownerKey(of familyMemberID: UUID, on connection: PostgresConnection) async throws -> X25519.PublicKey? {
        try await connection.query(
            "SELECT owner_agreement_public_key FROM family_members WHERE family_member_id = \(familyMemberID)"
        ).first.flatMap { try? X25519.PublicKey(rawRepresentation: $0.decode([UInt8].self, column: 0)) }
    }

    /// The most recent reports, newest first; an owner's scope sees those of the family
    /// members they own now.
    static func recent(
        ownerUserID: UUID?, familyMemberID: UUID?, limit: Int, on connection: PostgresConnection
    ) async throws -> [KeyChainViolationRecord] {
        let columns = """
            report_id, code, family_member_id, reporter_user_id, reporter_device_id, offered_fmk_version,
            statement_seq, verified_seq, detail, detected_at, verification, received_at
            """
        let rows: [PostgresRow]
        switch (ownerUserID, familyMemberID) {
        case (nil, nil):
            rows = try await connection.query(
                "SELECT \(unescaped: columns) FROM key_chain_violations ORDER BY received_at DESC, report_id LIMIT \(limit)")
        case (nil, let familyMemberID?):
            rows = try await connection.query(
                """
                SELECT \(unescaped: columns) FROM key_chain_violations WHERE family_member_id = \(familyMemberID)
                ORDER BY received_at DESC, report_id LIMIT \(limit)
                """)
        case (let owner?, let familyMemberID):
            rows = try await connection.query(
                """
                SELECT \(unescaped: columns) FROM key_chain_violations v
                WHERE v.family_member_id IN (SELECT family_member_id FROM family_members WHERE owner_user_id = \(owner))
                  AND (\(familyMemberID == nil) OR v.family_member_id = \(familyMemberID ?? UUID()))
                ORDER BY received_at DESC, report_id LIMIT \(limit)
                """)
        }
        return try rows.map { row in
            let (reportID, code, familyMemberID, user, device, offered, statementSeq, verifiedSeq, detail, detectedAt,
                 verification, receivedAt) = try row.decode(
                    UUID.self, String.self, UUID.self, UUID.self, UUID.self, Int?.self, Int?.self, Int.self, String.self,
                    Date.self, String.self, Date.self)
            return KeyChainViolationRecord(
                violation: KeyChainViolation(
                    reportID: reportID, code: KeyChainViolation.Code(rawValue: code) ?? .malformed,
                    familyMemberID: familyMemberID, reporterUserID: user, reporterDeviceID: device,
                    offeredFMKVersion: offered, statementSeq: statementSeq, verifiedSeq: verifiedSeq, detail: detail,
                    detectedAt: detectedAt),
                verification: AuditNotification.ReporterVerification(rawValue: verification) ?? .unverifiedDevice,
                receivedAt: receivedAt)
        }
    }
}
