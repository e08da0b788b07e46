import Foundation
import GRDB
import RescindClient

/// The agent's local SQLite database: the record cache (still encrypted under each family
/// member's FMK), the FMKs wrapped under the device's storage key, version floors, the
/// command inbox and the ack outbox.
///
/// Every state change is one SQLite transaction, so a crash leaves either the old or the
/// new state, never a half-rotated or half-erased cache. `secure_delete` makes SQLite zero
/// deleted content, `temp_store=MEMORY` keeps VACUUM's scratch copy off the disk, and the
/// rollback journal (DatabaseQueue's default) is unlinked after each commit, so no file in
/// the data directory keeps an erased key or ciphertext.
final class AgentStore: Sendable {
    let queue: DatabaseQueue

    /// Opens (creating 0600 if missing) and migrates the database at `path`.
    init(path: String) throws {
        try SecureFiles.createOwnerOnlyFile(path)
        try SecureFiles.checkOwnerOnly(path, kind: "database")
        var configuration = Configuration()
        configuration.label = "rescind-agent"
        configuration.busyMode = .timeout(5)
        configuration.prepareDatabase { db in
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
    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await queue.write(body)
        } catch let error as AgentError {
            throw error
        } catch let error as CancellationError {
            // A graceful shutdown cancels the loops: that ends them normally, it is no storage failure.
            throw error
        } catch {
            throw AgentError(Self.code(of: error), "local database write failed: \(Self.describe(error))")
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
