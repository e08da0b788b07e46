import Foundation
import GRDB
import RescindClient

/// The agent's local SQLite database: the record cache (still encrypted under each family
/// member's FMK), the FMKs wrapped under the device's storage key, version floors, the
/// command inbox and the ack outbox.
///
/// Every state change is one SQLite transaction, so a crash leaves either the old or the
/// new state, never a half-rotated or half-erased cache. The journal is a write-ahead log with
/// `synchronous=FULL`: a commit is durable when it returns (an erasure survives a power cut;
/// the exceptions are bookkeeping transactions written with `write(synced: false)`),
/// at one sync of the log instead of the rollback journal's three (journal, its header, the
/// database), which made SQLite's syncs most of an agent's time per rotation (docs/benchmarks.md,
/// commit → last ack). `secure_delete` makes SQLite zero deleted content and `temp_store=MEMORY`
/// keeps VACUUM's scratch copy off the disk. In a write-ahead log the old pages stay in the
/// database file, and earlier page images in the log, until a checkpoint; so every transaction
/// that leaves the `vacuum` maintenance task (an erasure, at-rest encryption switched, a sealed
/// command's receipt deleted) is followed, before the queue runs anything else, by a
/// checkpoint that copies the log into the database and truncates it to zero bytes (`scrub`):
/// once such a change returns, as with the rollback journal unlinked at commit, no file in the
/// data directory keeps an erased key or ciphertext. An erasure itself commits on the rollback
/// journal (`write(erasing:)`), so even a crash between its commit and that checkpoint leaves
/// no erased byte in any file (`CrashedErasureTests`).
final class AgentStore: Sendable {
    let queue: DatabaseQueue

    /// The page size of a new cache: 16 KiB, not SQLite's 4 KiB. A cached record (a 2 KiB
    /// ciphertext and its ids, ~2.2 KB) is over half a 4 KiB page, so each took a page of its own
    /// and a rotation's 500 records wrote ~2 MB of log (and a 2 MB file) for 1.1 MB of records;
    /// seven fit in 16 KiB: ~1.2 MB of log per rotation, 43 % less to write and sync
    /// (docs/benchmarks.md, commit → last ack). A cache created before keeps its 4 KiB pages.
    static let pageSize = 16_384

    /// Opens (creating 0600 if missing) and migrates the database at `path`.
    init(path: String) throws {
        try SecureFiles.createOwnerOnlyFile(path)
        try SecureFiles.checkOwnerOnly(path, kind: "database")
        var configuration = Configuration()
        configuration.label = "rescind-agent"
        configuration.busyMode = .timeout(5)
        configuration.prepareDatabase { db in
            // Before anything writes the file: a new cache gets `pageSize`-byte pages (an existing
            // one keeps its own; a page size cannot change under a write-ahead log).
            try db.execute(sql: "PRAGMA page_size = \(Self.pageSize)")
            // Not GRDB's `.wal` journal mode: it sets synchronous=NORMAL, whose commits are durable
            // only at the next checkpoint.
            _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: "PRAGMA synchronous = FULL")
            try db.execute(sql: "PRAGMA secure_delete = ON")
            try db.execute(sql: "PRAGMA temp_store = MEMORY")
        }
        do {
            queue = try DatabaseQueue(path: path, configuration: configuration)
            try Self.migrator.migrate(queue)
        } catch {
            throw AgentError(.storage, "cannot open the local database \(path): \(Self.describe(error))")
        }
    }

    /// Runs `body` in one write transaction on GRDB's queue (never on the cooperative pool).
    /// When the transaction leaves the `vacuum` maintenance task (it erased or removed something
    /// no file may keep), the log is checkpointed and truncated (`scrub`) before the queue runs
    /// anything else, so that nothing reads an erasure's ack before its old pages are gone.
    ///
    /// `synced: false` is for bookkeeping whose loss only repeats idempotent work (an offset
    /// mark, an ack or receipt marked sent, which is then sent again and deduplicated by its
    /// id): its COMMIT does not sync the log (`synchronous=NORMAL` for that one transaction).
    /// A process crash loses nothing (the pages are in the kernel's cache); a power cut may
    /// lose it, but only together with everything committed after it, because the next synced
    /// commit (or checkpoint) syncs the whole log, this transaction's frames included, and the
    /// log is replayed as a prefix. An inbox entry, a command's effect with its ack, and
    /// anything that leaves the `vacuum` task stay synced (the scrub's checkpoint syncs anyway).
    /// This keeps two synced transactions per command (inbox, effect with ack) instead of four
    /// (docs/benchmarks.md, commit → last ack).
    ///
    /// `erasing`: the transaction is an erasure, so it runs on the rollback journal instead of
    /// the log (`rollbackJournal`): its commit overwrites the erased pages in the database file
    /// itself (zeroed by `secure_delete`) and unlinks the journal that held their old images,
    /// so a crash right after the commit (before `scrub`) leaves no erased byte in any file.
    /// An erasure is always synced. `afterCommit` runs between the commit and the scrub of a
    /// transaction that leaves the `vacuum` task (the dev kit's `afterEraseCommitBeforeScrub` step).
    func write<T: Sendable>(
        synced: Bool = true, erasing: Bool = false, afterCommit: @escaping @Sendable () -> Void = {},
        _ body: @escaping @Sendable (Database) throws -> T
    ) async throws -> T {
        try await writeReportingJournal(synced: synced, erasing: erasing, afterCommit: afterCommit, body).result
    }

    /// `write`, also saying whether an erasure committed on the rollback journal
    /// (`onRollbackJournal`): its erased bytes were then in no file from its commit on, and its
    /// compaction (VACUUM) need not come before its ack (`complete`).
    func writeReportingJournal<T: Sendable>(
        synced: Bool = true, erasing: Bool = false, afterCommit: @escaping @Sendable () -> Void = {},
        _ body: @escaping @Sendable (Database) throws -> T
    ) async throws -> (result: T, onRollbackJournal: Bool) {
        let unsynced = !synced && !erasing
        do {
            return try await queue.writeWithoutTransaction { db in
                var result: T?
                var scrub = false
                let rollbackJournal = erasing && Self.leaveWriteAheadLog(db)
                if unsynced { try db.execute(sql: "PRAGMA synchronous = NORMAL") }
                let committed = Result {
                    try db.inTransaction {
                        result = try body(db)
                        scrub = try Self.vacuumPending(in: db)
                        return .commit
                    }
                }
                // Back to FULL and to the log before anything else runs on the connection, whatever happened.
                if unsynced { try db.execute(sql: "PRAGMA synchronous = FULL") }
                if case .failure = committed, rollbackJournal { try? Self.enterWriteAheadLog(db) }
                try committed.get()
                if scrub { afterCommit() }
                if rollbackJournal { try Self.enterWriteAheadLog(db) }
                if scrub { try Self.scrub(db) }
                guard let result else { throw AgentError(.storage, "a write transaction returned nothing") }
                return (result, rollbackJournal)
            }
        } catch let error as AgentError {
            throw error
        } catch let error as CancellationError {
            // A graceful shutdown cancels the loops: that ends them normally, it is no storage failure.
            throw error
        } catch {
            throw AgentError(Self.code(of: error), "local database write failed: \(Self.describe(error))")
        }
    }

    /// Switches the connection to the rollback journal (`DELETE`) for one erasure: checkpoints
    /// the log into the database and deletes it. `false` (the log stays) when another connection
    /// holds the database open (an `rescind-agent status` reading it): the erasure then commits
    /// through the log, and is only in no file once `scrub` ran.
    static func leaveWriteAheadLog(_ db: Database) -> Bool {
        (try? String.fetchOne(db, sql: "PRAGMA journal_mode = DELETE"))?.lowercased() == "delete"
    }

    /// Back to the write-ahead log after `leaveWriteAheadLog`.
    static func enterWriteAheadLog(_ db: Database) throws {
        let mode = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
        guard mode?.lowercased() == "wal" else {
            throw AgentError(.storageBusy, "could not switch the local database back to its write-ahead log")
        }
    }

    func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await queue.read(body)
        } catch let error as AgentError {
            throw error
        } catch let error as CancellationError {
            // A graceful shutdown cancels the loops: that ends them normally, it is no storage failure.
            throw error
        } catch {
            throw AgentError(Self.code(of: error), "local database read failed: \(Self.describe(error))")
        }
    }

    /// `.storageBusy` when retrying may succeed (busy, locked, I/O, full, cannot open), `.storage` otherwise.
    static func code(of error: any Error) -> AgentError.Code {
        guard let error = error as? DatabaseError else { return .storage }
        switch error.resultCode.primaryResultCode {
        case .SQLITE_BUSY, .SQLITE_LOCKED, .SQLITE_IOERR, .SQLITE_FULL, .SQLITE_CANTOPEN, .SQLITE_PROTOCOL, .SQLITE_NOMEM,
            .SQLITE_INTERRUPT:
            return .storageBusy
        default:
            return .storage
        }
    }

    /// SQLite's result code only: GRDB's own description would include the SQL and, with
    /// `publicStatementArguments`, values.
    static func describe(_ error: any Error) -> String {
        if let error = error as? DatabaseError { return "SQLite error \(error.resultCode.rawValue)" }
        return String(describing: type(of: error))
    }
}
