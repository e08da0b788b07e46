import Foundation
import GRDB
import RescindClient
import RescindProtocol

/// The staging table of long rotations: pages of verified records wait here, under one
/// download id, until the rotation's final transaction swaps them into `records`, so the
/// agent never holds a large family member's records in memory (BENCHMARKS.md, agent peak
/// RSS). Each download checks at the swap that every row it staged is still there: another
/// process on the same data directory (`rescind-agent sync` next to a running agent) may
/// clear them, and a rotation must never swap in part of a family member.
extension AgentStore {
    /// Stages one verified page: its records replace earlier rows of the same id in this
    /// download, its deletions remove them. Sealed under the at-rest layer when that is on.
    func stageIncoming(download: UUID, records: [RecordResponse], deleted: [UUID], atRest: AtRestLayer?) async throws {
        _ = try await write { db in
            try Self.insert(records, into: .incoming(download), atRest: atRest, in: db)
            let statement = try db.cachedStatement(sql: "DELETE FROM incoming_records WHERE download_id = ? AND record_id = ?")
            for id in deleted { try statement.execute(arguments: [download.text, id.text]) }
        }
    }

    /// Rows staged by one download (by all when `nil`).
    func incomingCount(download: UUID? = nil) async throws -> Int {
        try await read { db in
            guard let download else { return try Int.fetchOne(db, sql: "SELECT count(*) FROM incoming_records") ?? 0 }
            return try Int.fetchOne(
                db, sql: "SELECT count(*) FROM incoming_records WHERE download_id = ?", arguments: [download.text]) ?? 0
        }
    }

    /// Drops what one download staged (it failed, raced or was not needed).
    func clearIncoming(download: UUID) async throws {
        _ = try await write { db in try Self.clearIncoming(download: download, in: db) }
    }

    /// Drops every staged row: what downloads interrupted by a crash left behind.
    func clearAllIncoming() async throws {
        _ = try await write { db in try db.execute(sql: "DELETE FROM incoming_records") }
    }

    static func clearIncoming(download: UUID, in db: Database) throws {
        try db.execute(sql: "DELETE FROM incoming_records WHERE download_id = ?", arguments: [download.text])
    }

    /// Every download of a family member (an erasure leaves nothing of it anywhere).
    static func clearIncoming(of familyMemberID: UUID, in db: Database) throws {
        try db.execute(sql: "DELETE FROM incoming_records WHERE family_member_id = ?", arguments: [familyMemberID.text])
    }

    /// Moves a download's staged records into the cache (replacing rows of the same id).
    /// - Throws: `.downloadDisturbed` (transient) unless exactly `count` rows were there.
    static func swapInIncoming(download: UUID, count: Int, familyMemberID: UUID, in db: Database) throws {
        try db.execute(
            sql: """
                INSERT INTO records (record_id, family_member_id, fmk_version, nonce, ciphertext, tag, change_seq, at_rest)
                SELECT record_id, family_member_id, fmk_version, nonce, ciphertext, tag, change_seq, at_rest
                FROM incoming_records WHERE download_id = ? AND family_member_id = ?
                ON CONFLICT (record_id) DO UPDATE SET
                    fmk_version = excluded.fmk_version, nonce = excluded.nonce, ciphertext = excluded.ciphertext,
                    tag = excluded.tag, change_seq = excluded.change_seq, at_rest = excluded.at_rest
                """,
            arguments: [download.text, familyMemberID.text])
        let moved = db.changesCount
        try clearIncoming(download: download, in: db)
        guard moved == count else {
            throw AgentError(
                .downloadDisturbed, "\(moved) of \(count) downloaded records were still staged; the rotation is done again")
        }
    }
}
