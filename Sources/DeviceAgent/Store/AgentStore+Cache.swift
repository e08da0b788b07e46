import Foundation
import GRDB
import RescindClient
import RescindProtocol

extension AgentStore {
    func familyMember(_ id: UUID) async throws -> FamilyMemberState? {
        try await read { db in try Self.familyMember(id, in: db) }
    }

    func familyMembers() async throws -> [FamilyMemberState] {
        try await read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM family_members ORDER BY family_member_id").map(FamilyMemberState.init(row:))
        }
    }

    /// The cached records of a family member as the grant service stores them; rows under
    /// at-rest encryption are opened with `atRest` (`AgentError.locked` without it).
    func records(of familyMemberID: UUID, atRest: AtRestLayer? = nil) async throws -> [CachedRecord] {
        try await read { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM records WHERE family_member_id = ? ORDER BY change_seq",
                arguments: [familyMemberID.text]
            ).map { try Self.cachedRecord($0, atRest: atRest) }
        }
    }

    static func cachedRecord(_ row: Row, atRest: AtRestLayer?) throws -> CachedRecord {
        var record = try CachedRecord(row: row)
        guard row["at_rest"] as Bool else { return record }
        guard let atRest else { throw AgentError(.locked, "cached records are encrypted at rest: unlock to read them") }
        (record.nonce, record.ciphertext, record.tag) = try atRest.open(
            nonce: record.nonce, ciphertext: record.ciphertext, tag: record.tag, recordID: record.recordID)
        return record
    }

    /// Whether new records are written under the at-rest layer.
    static func atRestEnabled(in db: Database) throws -> Bool {
        try String.fetchOne(db, sql: "SELECT value FROM settings WHERE name = 'at_rest'") == "on"
    }

    /// Applies a change without a command (self-healing, sync).
    func apply(_ change: LocalChange) async throws -> ChangeEffect {
        let effect = try await write(erasing: change.erases) { db in try Self.apply(change, in: db) }
        try await vacuumIfNeeded()
        return effect
    }

    /// Finishes an erasure: VACUUM rebuilds the file so that no free page keeps old bytes, and
    /// each VACUUM's pages, written through the log, are checkpointed into the database and the
    /// log truncated (`scrub`). The pending flag is committed with the erasure (whose own commit
    /// was already scrubbed, see `write`), so a crash before this point is finished at the next start.
    func vacuumIfNeeded() async throws {
        let pending = try await read { db in try Self.vacuumPending(in: db) }
        guard pending else { return }
        do {
            try await queue.writeWithoutTransaction { db in
                try db.execute(sql: "VACUUM")
                try Self.scrub(db)
                try db.execute(sql: "DELETE FROM maintenance WHERE task = 'vacuum'")
                // The flag's own deletion leaves a free page; compact once more so nothing is left.
                try db.execute(sql: "VACUUM")
                try Self.scrub(db)
            }
        } catch let error as AgentError {
            throw error
        } catch {
            throw AgentError(.storage, "VACUUM failed: \(Self.describe(error))")
        }
    }

    /// Copies whatever the write-ahead log holds into the database and truncates it (at start:
    /// what a crash left in the log).
    func scrub() async throws {
        do {
            try await queue.writeWithoutTransaction { db in try Self.scrub(db) }
        } catch {
            throw AgentError(Self.code(of: error), "checkpoint failed: \(Self.describe(error))")
        }
    }

    /// The journal settings in force on the store's connection (for tests and diagnostics).
    func journalSettings() async throws -> (mode: String, synchronous: Int, secureDelete: Bool, pageSize: Int) {
        try await read { db in
            (
                try String.fetchOne(db, sql: "PRAGMA journal_mode") ?? "",
                try Self.synchronous(in: db),
                try Bool.fetchOne(db, sql: "PRAGMA secure_delete") ?? false,
                try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 0
            )
        }
    }

    /// The connection's `PRAGMA synchronous` (2 FULL, 1 NORMAL), as a transaction sees it.
    static func synchronous(in db: Database) throws -> Int {
        try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? -1
    }

    /// Whether an erasure (or another removal no file may keep) still waits for its VACUUM.
    static func vacuumPending(in db: Database) throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM maintenance WHERE task = 'vacuum')") ?? false
    }

    /// Checkpoints the write-ahead log into the database and truncates it to zero bytes: the
    /// page images it held (old ciphertext, old keys, deleted rows) are then in no file, and the
    /// database file's pages are the current ones (with `secure_delete`, freed content zeroed).
    /// Outside any transaction, on the store's queue.
    static func scrub(_ db: Database) throws {
        _ = try db.checkpoint(.truncate)
    }

    // MARK: Inside a transaction

    static func familyMember(_ id: UUID, in db: Database) throws -> FamilyMemberState? {
        try Row.fetchOne(db, sql: "SELECT * FROM family_members WHERE family_member_id = ?", arguments: [id.text])
            .map(FamilyMemberState.init(row:))
    }

    static func apply(_ change: LocalChange, in db: Database) throws -> ChangeEffect {
        let state = try familyMember(change.familyMemberID, in: db)
        switch change {
        case .nothing:
            return ChangeEffect(changed: false, recordsProcessed: 0, fmkVersion: state.heldVersion)
        case .rotate(let result):
            return try rotate(result, from: state, in: db)
        case .incremental(let result):
            return try incremental(result, from: state, in: db)
        case .erase(let id, let floor):
            return try erase(id, floor: floor, from: state, in: db)
        }
    }

    private static func rotate(_ result: RotationResult, from state: FamilyMemberState?, in db: Database) throws -> ChangeEffect {
        if let state, state.status == .active, state.fmkVersion >= result.fmkVersion {
            if case .staged(let download, _) = result.records { try clearIncoming(download: download, in: db) }
            return ChangeEffect(changed: false, recordsProcessed: 0, fmkVersion: state.fmkVersion)
        }
        if let state, result.fmkVersion < state.versionFloor {
            throw AgentError(.versionDowngrade, "refusing FMK v\(result.fmkVersion) below v\(state.versionFloor) already seen")
        }
        let id = result.familyMemberID.text
        let floor = max(result.fmkVersion, state?.versionFloor ?? 0)
        try db.execute(
            sql: """
                INSERT INTO family_members (family_member_id, status, fmk_version, version_floor, wrapped_fmk, sync_cursor, updated_at)
                VALUES (?, 'active', ?, ?, ?, ?, ?)
                ON CONFLICT (family_member_id) DO UPDATE SET
                    status = 'active', fmk_version = excluded.fmk_version, version_floor = excluded.version_floor,
                    wrapped_fmk = excluded.wrapped_fmk, sync_cursor = excluded.sync_cursor, updated_at = excluded.updated_at
                """,
            arguments: [id, result.fmkVersion, floor, result.wrappedFMK, result.cursor, Date().timeIntervalSince1970])
        // Overwrite in place, then drop what the service no longer has (still at an older
        // version): each old ciphertext's page is rewritten once by its successor instead of
        // being zeroed by secure_delete and a new page written (half the I/O of a rotation).
        switch result.records {
        case .inMemory(let records):
            try insert(records, into: .records, atRest: result.atRest, in: db)
        case .staged(let download, let count):
            try swapInIncoming(download: download, count: count, familyMemberID: result.familyMemberID, in: db)
        }
        try db.execute(
            sql: "DELETE FROM records WHERE family_member_id = ? AND fmk_version <> ?", arguments: [id, result.fmkVersion])
        // Also what an earlier, disturbed download of this family member left.
        try clearIncoming(of: result.familyMemberID, in: db)
        return ChangeEffect(changed: true, recordsProcessed: result.records.count, fmkVersion: result.fmkVersion)
    }

    private static func incremental(_ result: IncrementalResult, from state: FamilyMemberState?, in db: Database) throws -> ChangeEffect {
        guard let state, state.status == .active, state.fmkVersion == result.fmkVersion else {
            // The cache moved on while we downloaded; the next sync starts from the new state.
            return ChangeEffect(changed: false, recordsProcessed: 0, fmkVersion: state.heldVersion)
        }
        try insert(result.records, into: .records, atRest: result.atRest, in: db)
        for deleted in result.deletedRecordIDs {
            try db.execute(sql: "DELETE FROM records WHERE record_id = ?", arguments: [deleted.text])
        }
        try db.execute(
            sql: "UPDATE family_members SET sync_cursor = max(sync_cursor, ?), updated_at = ? WHERE family_member_id = ?",
            arguments: [result.cursor, Date().timeIntervalSince1970, state.familyMemberID.text])
        let count = result.records.count + result.deletedRecordIDs.count
        return ChangeEffect(changed: count > 0, recordsProcessed: count, fmkVersion: state.fmkVersion)
    }

    private static func erase(_ id: UUID, floor: Int, from state: FamilyMemberState?, in db: Database) throws -> ChangeEffect {
        let newFloor = max(floor, state?.versionFloor ?? 0)
        if let state, state.status == .revoked {
            try db.execute(
                sql: "UPDATE family_members SET version_floor = ? WHERE family_member_id = ?", arguments: [newFloor, id.text])
            return ChangeEffect(changed: false, recordsProcessed: 0, fmkVersion: 0)
        }
        let poisoned = try CryptographicErasure.poisonRecords(of: id, in: db)
        try clearIncoming(of: id, in: db)
        try db.execute(
            sql: """
                INSERT INTO family_members (family_member_id, status, fmk_version, version_floor, wrapped_fmk, sync_cursor, updated_at)
                VALUES (?, 'revoked', 0, ?, NULL, 0, ?)
                ON CONFLICT (family_member_id) DO UPDATE SET
                    status = 'revoked', fmk_version = 0, version_floor = excluded.version_floor, wrapped_fmk = NULL,
                    sync_cursor = 0, updated_at = excluded.updated_at
                """,
            arguments: [id.text, newFloor, Date().timeIntervalSince1970])
        try db.execute(sql: "INSERT OR IGNORE INTO maintenance (task) VALUES ('vacuum')")
        return ChangeEffect(changed: true, recordsProcessed: poisoned, fmkVersion: 0)
    }

    /// The two tables that hold cached record rows.
    enum RecordTable {
        case records
        /// A long rotation's staged pages (`AgentStore+Incoming`), of one download.
        case incoming(UUID)

        /// Insert-or-replace of one record; `incoming` takes the download id first.
        var upsert: String {
            let (target, download, key) =
                switch self {
                case .records: ("records (", "", "record_id")
                case .incoming: ("incoming_records (download_id, ", "?, ", "download_id, record_id")
                }
            return """
                INSERT INTO \(target)record_id, family_member_id, fmk_version, nonce, ciphertext, tag, change_seq, at_rest)
                VALUES (\(download)?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (\(key)) DO UPDATE SET
                    fmk_version = excluded.fmk_version, nonce = excluded.nonce, ciphertext = excluded.ciphertext,
                    tag = excluded.tag, change_seq = excluded.change_seq, at_rest = excluded.at_rest
                """
        }

        var leadingArguments: StatementArguments {
            switch self {
            case .records: []
            case .incoming(let download): [download.text]
            }
        }
    }

    /// Writes records (replacing rows of the same key) with one prepared statement for the
    /// whole batch: a rotation writes every record of the family member.
    static func insert(_ records: [RecordResponse], into table: RecordTable, atRest: AtRestLayer?, in db: Database) throws {
        guard !records.isEmpty else { return }
        let layered = try atRestEnabled(in: db)
        if layered, atRest == nil {
            throw AgentError(.locked, "at-rest encryption is on: records are written only while unlocked")
        }
        let statement = try db.cachedStatement(sql: table.upsert)
        for record in records {
            var stored = (nonce: record.nonce, ciphertext: record.ciphertext, tag: record.tag)
            if layered, let atRest {
                stored = try atRest.seal(nonce: record.nonce, ciphertext: record.ciphertext, tag: record.tag, recordID: record.recordID)
            }
            try statement.execute(
                arguments: table.leadingArguments + [
                    record.recordID.text, record.familyMemberID.text, record.fmkVersion, stored.nonce, stored.ciphertext,
                    stored.tag, record.changeSeq, layered,
                ])
        }
    }
}

extension Optional where Wrapped == FamilyMemberState {
    /// The FMK version held (0 for none or revoked).
    var heldVersion: Int {
        guard let state = self, state.status == .active else { return 0 }
        return state.fmkVersion
    }
}
