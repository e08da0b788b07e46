import Foundation
import GRDB
import RescindClient
import RescindProtocol

/// The staging table of long rotations: pages of verified records wait here, under one
/// download id, until the rotation's final transaction swaps them into `records`, so the
/// agent never holds a large family member's records in memory (docs/benchmarks.md, agent peak
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
    ///
    /// In statements of at most `swapChunk` staged rows: inside the rotation's transaction each
    /// statement that overwrites cached rows keeps the pages it changes in a statement journal
    /// until it ends, and `temp_store=MEMORY` (so that no scratch copy reaches the disk) keeps
    /// that journal in memory. One statement for 10,000 records of 2 KiB held ~23 MB there and
    /// put the agent's peak at 83 MiB (target 64); chunks of 500 hold ~1 MB (docs/benchmarks.md).
    static func swapInIncoming(download: UUID, count: Int, familyMemberID: UUID, in db: Database) throws {
        let bounds = try Row.fetchOne(
            db, sql: "SELECT min(rowid), max(rowid) FROM incoming_records WHERE download_id = ?", arguments: [download.text])
        var moved = 0
        if let first: Int64 = bounds?[0], let last: Int64 = bounds?[1] {
            let statement = try db.cachedStatement(
                sql: """
                    INSERT INTO records (record_id, family_member_id, fmk_version, nonce, ciphertext, tag, change_seq, at_rest)
                    SELECT record_id, family_member_id, fmk_version, nonce, ciphertext, tag, change_seq, at_rest
                    FROM incoming_records WHERE rowid >= ? AND rowid < ? AND download_id = ? AND family_member_id = ?
                    ON CONFLICT (record_id) DO UPDATE SET
                        fmk_version = excluded.fmk_version, nonce = excluded.nonce, ciphertext = excluded.ciphertext,
                        tag = excluded.tag, change_seq = excluded.change_seq, at_rest = excluded.at_rest
                    """)
            for start in stride(from: first, through: last, by: swapChunk) {
                try statement.execute(arguments: [start, start + Int64(swapChunk), download.text, familyMemberID.text])
                moved += db.changesCount
            }
        }
        try clearIncoming(download: download, in: db)
        guard moved == count else {
            throw AgentError(
                .downloadDisturbed, "\(moved) of \(count) downloaded records were still staged; the rotation is done again")
        }
    }

    /// Staged rows (by rowid) per statement of `swapInIncoming`.
    static let swapChunk = 500
}
