import Foundation
import GRDB
import RescindCrypto
import RescindProtocol

/// The sealed inbox of a locked agent: what arrives while the keys are away is stored sealed
/// to the inbox public key, and moved into the ordinary inbox (`commands`) at unlock.
extension AgentStore {
    /// What a locked agent does with one command, decided inside the transaction from what
    /// the device holds: a change it can make without keys (an erasure) and its outcome, or
    /// `nil` to keep the command for the unlock.
    typealias LockedAction = @Sendable (FamilyMemberState?) -> (change: LocalChange, outcome: DeviceAck.Outcome)?

    struct SealedEntry: Sendable {
        var seq: Int64
        var sealed: Data
        var offsetCommitted: Bool
    }

    /// What unsealing one entry did.
    enum UnsealOutcome: Equatable, Sendable {
        /// A new command, now pending in the inbox.
        case queued
        /// An erasure done while locked: recorded as done with its now signed ack.
        case acknowledged(DeviceAck)
        /// A replay of a completed command: answered `already_applied`.
        case replayed(DeviceAck)
        /// A redelivery of a command already in the inbox: nothing more.
        case duplicate
    }

    /// Seals `command` into the inbox and, when `action` says so, applies its change in the
    /// same transaction, recording the outcome inside the sealed entry.
    ///
    /// With `fromPending` the command is taken out of the cleartext inbox (an erasure that was
    /// pending when the agent started locked), carrying its offset state along. With `receipts`,
    /// its `not_now` receipt (what it held before acting) is owed in the same transaction: the
    /// answer waits for the unlock.
    /// - Returns: the entry's sequence number and the outcome recorded, or `nil` when a
    ///   `fromPending` command was no longer pending.
    func seal(
        _ command: DeviceCommand, to recipient: X25519.PublicKey, started: ContinuousClock.Instant, fromPending: Bool = false,
        receipts: ReceiptSigner? = nil, action: @escaping LockedAction
    ) async throws -> (seq: Int64, result: SealedCommand.Result?)? {
        let result = try await write { db -> (seq: Int64, result: SealedCommand.Result?)? in
            var offsetCommitted = false
            if fromPending {
                guard
                    let row = try Row.fetchOne(
                        db, sql: "SELECT offset_committed FROM commands WHERE command_id = ? AND state = 'pending'",
                        arguments: [command.commandID.text])
                else { return nil }
                offsetCommitted = row["offset_committed"]
                try db.execute(sql: "DELETE FROM commands WHERE command_id = ?", arguments: [command.commandID.text])
            }
            var entry = SealedCommand(command: command, result: nil)
            let local = try Self.familyMember(command.familyMemberID, in: db)
            if let receipts {
                Self.recordReceipt(in: db) { try receipts.receipt(for: command, .notNow, heldVersion: local.heldVersion) }
            }
            if let (change, outcome) = action(local) {
                let effect = try Self.apply(change, in: db)
                entry.result = SealedCommand.Result(
                    outcome: (outcome == .applied && !effect.changed) ? .alreadyApplied : outcome,
                    recordsProcessed: effect.recordsProcessed, fmkVersion: effect.fmkVersion,
                    durationMs: (ContinuousClock.now - started).wholeMilliseconds, error: nil, completedAt: Date())
            }
            try db.execute(
                sql: "INSERT INTO sealed_inbox (sealed, received_at, offset_committed) VALUES (?, ?, ?)",
                arguments: [try entry.sealed(to: recipient), Date().timeIntervalSince1970, offsetCommitted])
            return (db.lastInsertedRowID, entry.result)
        }
        try await vacuumIfNeeded()
        return result
    }

    /// Not synced, like `markOffsetCommitted`.
    func markSealedOffsetCommitted(_ seq: Int64) async throws {
        _ = try await write(synced: false) { db in
            try db.execute(sql: "UPDATE sealed_inbox SET offset_committed = 1 WHERE seq = ?", arguments: [seq])
        }
    }

    func sealedEntries() async throws -> [SealedEntry] {
        try await read { db in
            try Row.fetchAll(db, sql: "SELECT seq, sealed, offset_committed FROM sealed_inbox ORDER BY seq").map {
                SealedEntry(seq: $0["seq"], sealed: $0["sealed"], offsetCommitted: $0["offset_committed"])
            }
        }
    }

    /// Moves one opened entry into the inbox in one transaction: a new command becomes
    /// pending; an erasure done while locked becomes a done command with its ack signed now
    /// (dated when the erasure happened); a command already known is a redelivery, or a
    /// replay answered `already_applied`, exactly as in `enqueue`.
    func unseal(_ entry: SealedEntry, _ opened: SealedCommand, signer: AckSigner) async throws -> UnsealOutcome {
        try await write { db in
            try db.execute(sql: "DELETE FROM sealed_inbox WHERE seq = ?", arguments: [entry.seq])
            let command = opened.command
            if let row = try Row.fetchOne(
                db, sql: "SELECT state, offset_committed FROM commands WHERE command_id = ?", arguments: [command.commandID.text])
            {
                let done = (row["state"] as String) == "done" && (row["offset_committed"] as Bool)
                guard done, entry.offsetCommitted else { return .duplicate }
                let held = try Self.familyMember(command.familyMemberID, in: db).heldVersion
                let (ack, message) = try signer.ack(
                    for: command, outcome: .alreadyApplied,
                    effect: ChangeEffect(changed: false, recordsProcessed: 0, fmkVersion: held), duration: .zero, error: nil)
                try Self.insertAck(ack, message: message, in: db)
                return .replayed(ack)
            }
            try db.execute(
                sql: """
                    INSERT INTO commands (command_id, event_id, device_id, action, family_member_id, fmk_version, issued_at,
                                          received_at, state, offset_committed)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?)
                    """,
                arguments: [
                    command.commandID.text, command.eventID.text, command.deviceID.text, command.action.rawValue,
                    command.familyMemberID.text, command.newFMKVersion, command.issuedAt.timeIntervalSince1970,
                    Date().timeIntervalSince1970, entry.offsetCommitted,
                ])
            guard let result = opened.result else { return .queued }
            let (ack, message) = try signer.ack(
                for: command, outcome: result.outcome,
                effect: ChangeEffect(changed: true, recordsProcessed: result.recordsProcessed, fmkVersion: result.fmkVersion),
                duration: .milliseconds(result.durationMs), error: result.error, ackedAt: result.completedAt)
            try Self.insertAck(ack, message: message, in: db)
            try db.execute(
                sql: """
                    UPDATE commands SET state = 'done', outcome = ?, records_processed = ?, error = ?, completed_at = ?
                    WHERE command_id = ?
                    """,
                arguments: [
                    result.outcome.rawValue, result.recordsProcessed, result.error, result.completedAt.timeIntervalSince1970,
                    command.commandID.text,
                ])
            return .acknowledged(ack)
        }
    }

    /// Drops an entry that does not open (logged and counted by the caller).
    func discardSealed(_ seq: Int64) async throws {
        _ = try await write { db in try db.execute(sql: "DELETE FROM sealed_inbox WHERE seq = ?", arguments: [seq]) }
    }
}
