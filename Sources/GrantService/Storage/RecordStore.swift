import Foundation
import RescindPostgres
import RescindProtocol
import RescindServiceSupport

/// Encrypted records and the change feed devices sync from.
struct RecordStore: Sendable {
    let pool: PostgresConnectionPool

    /// Creates or replaces a record. It must be encrypted under the current FMK
    /// version (409 otherwise: the writer missed a rotation).
    func put(_ familyMemberID: UUID, _ recordID: UUID, _ request: PutRecordRequest, by userID: UUID) async throws -> RecordResponse {
        try Self.validate(nonce: request.nonce, tag: request.tag)
        return try await pool.transaction { connection in
            let access = try await FamilyMemberAccess.load(familyMemberID, for: userID, lock: true, on: connection)
            try await access.requireWriteAccess(on: connection)
            guard request.fmkVersion == access.currentFMKVersion else {
                throw APIError.versionConflict(current: access.currentFMKVersion)
            }
            let rows = try await connection.query(
                """
                INSERT INTO records (record_id, family_member_id, fmk_version, nonce, ciphertext, tag)
                VALUES (\(recordID), \(familyMemberID), \(request.fmkVersion), \(request.nonce), \(request.ciphertext), \(request.tag))
                ON CONFLICT (record_id) DO UPDATE
                SET fmk_version = EXCLUDED.fmk_version, nonce = EXCLUDED.nonce, ciphertext = EXCLUDED.ciphertext,
                    tag = EXCLUDED.tag, change_seq = nextval('record_change_seq'), updated_at = now()
                WHERE records.family_member_id = EXCLUDED.family_member_id
                RETURNING change_seq
                """)
            guard let changeSeq = try rows.first?.decode(Int64.self, column: 0) else {
                throw APIError.conflict("record_id_taken", "this record id belongs to another family member")
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
                SELECT record_id, fmk_version, nonce, ciphertext, tag, change_seq FROM records
                WHERE record_id = \(recordID) AND family_member_id = \(familyMemberID)
                """
            ).first else { throw APIError.notFound("record") }
            return try Self.decode(row, familyMemberID: familyMemberID)
        }
    }

    func delete(_ familyMemberID: UUID, _ recordID: UUID, by userID: UUID) async throws {
        try await pool.transaction { connection in
            let access = try await FamilyMemberAccess.load(familyMemberID, for: userID, lock: true, on: connection)
            try await access.requireWriteAccess(on: connection)
            let deleted = try await connection.execute(
                "DELETE FROM records WHERE record_id = \(recordID) AND family_member_id = \(familyMemberID)")
            guard deleted == 1 else { throw APIError.notFound("record") }
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
                (SELECT change_seq, record_id, false AS deleted, fmk_version, nonce, ciphertext, tag FROM records
                 WHERE family_member_id = \(familyMemberID) AND change_seq > \(since)
                 ORDER BY change_seq LIMIT \(limit + 1))
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
