import Foundation
import RescindPostgres
import RescindProtocol
import RescindServiceSupport

/// Encrypted records and the change feed devices sync from.
struct RecordStore: Sendable {
    let pool: PostgresConnectionPool

    /// Creates or replaces a record. It must be encrypted under the current FMK
    /// version (409 otherwise: the writer missed a rotation).
    /// The ciphertext it replaces is kept, restorable by the owner (`RecordVersionStore`).
    func put(
        _ familyMemberID: UUID, _ recordID: UUID, _ request: PutRecordRequest, by caller: AuthenticatedDevice
    ) async throws -> RecordResponse {
        try Self.validate(nonce: request.nonce, tag: request.tag)
        return try await pool.transaction { connection in
            let access = try await FamilyMemberAccess.load(familyMemberID, for: caller.userID, lock: true, on: connection)
            try await access.requireWriteAccess(on: connection)
            guard request.fmkVersion == access.currentFMKVersion else {
                throw APIError.versionConflict(current: access.currentFMKVersion)
            }
            // Write-once bodies (migration 0014): the new ciphertext is a new body; the record row
            // points at it and the body it replaces is kept as a restorable version (migration 0023).
            let bodyID = UUID()
            try await connection.execute(
                """
                INSERT INTO record_bodies (body_id, nonce, ciphertext, tag)
                VALUES (\(bodyID), \(request.nonce), \(request.ciphertext), \(request.tag))
                """)
            let replaced = try await connection.query(
                """
                SELECT body_id, fmk_version FROM records
                WHERE record_id = \(recordID) AND family_member_id = \(familyMemberID) FOR UPDATE
                """
            ).first.map { try $0.decode(UUID.self, Int.self) }
            let rows = try await connection.query(
                """
                INSERT INTO records (record_id, family_member_id, fmk_version, body_id)
                VALUES (\(recordID), \(familyMemberID), \(request.fmkVersion), \(bodyID))
                ON CONFLICT (record_id) DO UPDATE
                SET fmk_version = EXCLUDED.fmk_version, body_id = EXCLUDED.body_id,
                    change_seq = nextval('record_change_seq'), updated_at = now()
                WHERE records.family_member_id = EXCLUDED.family_member_id
                RETURNING change_seq
                """)
            guard let changeSeq = try rows.first?.decode(Int64.self, column: 0) else {
                throw APIError.conflict("record_id_taken", "this record id belongs to another family member")
            }
            if let replaced {
                try await RecordVersionStore.keep(
                    bodyID: replaced.0, fmkVersion: replaced.1, of: recordID, in: familyMemberID, kind: .overwritten, by: caller,
                    on: connection)
            }
            try await connection.execute(
                "DELETE FROM record_tombstones WHERE record_id = \(recordID) AND family_member_id = \(familyMemberID)")
            return RecordResponse(
                recordID: recordID, familyMemberID: familyMemberID, fmkVersion: request.fmkVersion,
                nonce: request.nonce, ciphertext: request.ciphertext, tag: request.tag, changeSeq: changeSeq)
        }
    }

    static func validate(nonce: Data, tag: Data) throws {
        guard nonce.count == 12 else { throw APIError.badRequest("nonce must be 12 bytes") }
        guard tag.count == 16 else { throw APIError.badRequest("tag must be 16 bytes") }
    }

    func get(_ familyMemberID: UUID, _ recordID: UUID, for userID: UUID) async throws -> RecordResponse {
        try await pool.withConnection { connection in
            let access = try await FamilyMemberAccess.load(familyMemberID, for: userID, on: connection)
            try access.requireActiveGrant()
            guard let row = try await connection.query(
                """
                SELECT r.record_id, r.fmk_version, b.nonce, b.ciphertext, b.tag, r.change_seq
                FROM records r JOIN record_bodies b USING (body_id)
                WHERE r.record_id = \(recordID) AND r.family_member_id = \(familyMemberID)
                """
            ).first else { throw APIError.notFound("record") }
            return try Self.decode(row, familyMemberID: familyMemberID)
        }
    }

    /// Leaves a tombstone for sync; the ciphertext is kept, restorable by the owner (`RecordVersionStore`).
    func delete(_ familyMemberID: UUID, _ recordID: UUID, by caller: AuthenticatedDevice) async throws {
        try await pool.transaction { connection in
            let access = try await FamilyMemberAccess.load(familyMemberID, for: caller.userID, lock: true, on: connection)
            try await access.requireWriteAccess(on: connection)
            guard let deleted = try await connection.query(
                """
                DELETE FROM records WHERE record_id = \(recordID) AND family_member_id = \(familyMemberID)
                RETURNING body_id, fmk_version
                """
            ).first?.decode(UUID.self, Int.self) else { throw APIError.notFound("record") }
            try await RecordVersionStore.keep(
                bodyID: deleted.0, fmkVersion: deleted.1, of: recordID, in: familyMemberID, kind: .deleted, by: caller, on: connection)
            try await connection.execute(
                """
                INSERT INTO record_tombstones (record_id, family_member_id) VALUES (\(recordID), \(familyMemberID))
                ON CONFLICT (family_member_id, record_id) DO UPDATE SET change_seq = nextval('record_change_seq'), deleted_at = now()
                """)
        }
    }

    /// Changes after `since`, oldest first: records and deletions interleaved by
    /// change sequence, so a device that applies pages in order converges.
    func changes(_ familyMemberID: UUID, since: Int64, limit: Int, for userID: UUID) async throws -> RecordPage {
        try await pool.withConnection { connection in
            let access = try await FamilyMemberAccess.load(familyMemberID, for: userID, on: connection)
            try access.requireActiveGrant()
            let rows = try await connection.query(
                """
                (SELECT r.change_seq, r.record_id, false AS deleted, r.fmk_version, b.nonce, b.ciphertext, b.tag
                 FROM (SELECT change_seq, record_id, fmk_version, body_id FROM records
                       WHERE family_member_id = \(familyMemberID) AND change_seq > \(since)
                       ORDER BY change_seq LIMIT \(limit + 1)) r
                 JOIN record_bodies b USING (body_id)
                 ORDER BY r.change_seq)
                UNION ALL
                (SELECT change_seq, record_id, true, NULL, NULL, NULL, NULL FROM record_tombstones
                 WHERE family_member_id = \(familyMemberID) AND change_seq > \(since)
                 ORDER BY change_seq LIMIT \(limit + 1))
                ORDER BY 1 LIMIT \(limit + 1)
                """)
            var page = RecordPage(
                records: [], deletedRecordIDs: [], nextCursor: since, hasMore: rows.count > limit,
                currentFMKVersion: access.currentFMKVersion)
            for row in rows.prefix(limit) {
                let seq = try row.decode(Int64.self, column: 0)
                let id = try row.decode(UUID.self, column: 1)
                page.nextCursor = seq
                if try row.decode(Bool.self, column: 2) {
                    page.deletedRecordIDs.append(id)
                } else {
                    let (_, _, _, version, nonce, ciphertext, tag) = try row.decode(
                        Int64.self, UUID.self, Bool.self, Int.self, Data.self, Data.self, Data.self)
                    page.records.append(
                        RecordResponse(
                            recordID: id, familyMemberID: familyMemberID, fmkVersion: version, nonce: nonce,
                            ciphertext: ciphertext, tag: tag, changeSeq: seq))
                }
            }
            return page
        }
    }

    private static func decode(_ row: PostgresRow, familyMemberID: UUID) throws -> RecordResponse {
        let (id, version, nonce, ciphertext, tag, seq) = try row.decode(
            UUID.self, Int.self, Data.self, Data.self, Data.self, Int64.self)
        return RecordResponse(
            recordID: id, familyMemberID: familyMemberID, fmkVersion: version, nonce: nonce, ciphertext: ciphertext,
            tag: tag, changeSeq: seq)
    }
}
