import Foundation
import GRDB
import RescindClient
import RescindProtocol
import RescindTracing

/// The command inbox: verified commands, stored before their Kafka offset is committed and
/// completed in the same transaction as their effect and their ack.
extension AgentStore {
    enum EnqueueResult: Equatable, Sendable {
        /// First time this command id is seen.
        case new
        /// Seen before. `offsetCommitted` false means its offset was never committed: this
        /// is the redelivery after a crash, and the ack it is owed is already recorded.
        case duplicate(done: Bool, offsetCommitted: Bool)
    }

    /// Where a command reached the device.
    enum CommandSource: String, Sendable {
        /// Read from `device_commands`.
        case kafka
        /// Fetched from the grant service at check-in, having been missed on the topic.
        case checkIn = "check_in"
    }

    /// Stores a verified command as pending unless its id is known; with `receipts`, a new one's
    /// `delivered` receipt is owed in the same transaction; `trace`, the trace its handling
    /// continues.
    func enqueue(
        _ command: DeviceCommand, source: CommandSource = .kafka, receipts: ReceiptSigner? = nil, trace: TraceContext? = nil
    ) async throws -> EnqueueResult {
        try await write { db in
            if let row = try Row.fetchOne(
                db, sql: "SELECT state, offset_committed FROM commands WHERE command_id = ?", arguments: [command.commandID.text])
            {
                return .duplicate(done: (row["state"] as String) == "done", offsetCommitted: row["offset_committed"])
            }
            try db.execute(
                sql: """
                    INSERT INTO commands (command_id, event_id, device_id, action, family_member_id, fmk_version, issued_at,
                                          received_at, state, source, traceparent, tracestate)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?)
                    """,
                arguments: [
                    command.commandID.text, command.eventID.text, command.deviceID.text, command.action.rawValue, command.familyMemberID.text,
                    command.newFMKVersion, command.issuedAt.timeIntervalSince1970, Date().timeIntervalSince1970, source.rawValue,
                    trace?.traceparent, trace?.storableTraceState,
                ])
            if let receipts {
                Self.recordReceipt(in: db) {
                    try receipts.receipt(
                        for: command, .delivered, heldVersion: try Self.familyMember(command.familyMemberID, in: db).heldVersion)
                }
            }
            return .new
        }
    }

    /// The trace a command's handling continues (`nil`: none).
    func trace(of commandID: UUID) async throws -> TraceContext? {
        try await read { db in
            try Row.fetchOne(db, sql: "SELECT traceparent, tracestate FROM commands WHERE command_id = ?", arguments: [commandID.text])
                .flatMap(Self.trace(from:))
        }
    }

    /// The trace context stored in a row's `traceparent` and `tracestate`, if well formed.
    static func trace(from row: Row) -> TraceContext? {
        (row["traceparent"] as String?).flatMap { TraceContext(traceparent: $0, tracestate: row["tracestate"]) }
    }

    /// Whether the command is in the inbox already (pending or done).
    func knows(_ commandID: UUID) async throws -> Bool {
        try await read { db in
            try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM commands WHERE command_id = ?)", arguments: [commandID.text]) ?? false
        }
    }

    func source(of commandID: UUID) async throws -> CommandSource {
        try await read { db in
            try String.fetchOne(db, sql: "SELECT source FROM commands WHERE command_id = ?", arguments: [commandID.text])
                .flatMap(CommandSource.init(rawValue:)) ?? .kafka
        }
    }

    /// The last position of `GET /v1/devices/self/commands` taken in (0: none yet).
    func commandCursor() async throws -> Int64 {
        try await read { db in
            try String.fetchOne(db, sql: "SELECT value FROM settings WHERE name = 'command_cursor'").flatMap { Int64($0) } ?? 0
        }
    }

    func setCommandCursor(_ cursor: Int64) async throws {
        _ = try await write { db in
            try db.execute(
                sql: """
                    INSERT INTO settings (name, value) VALUES ('command_cursor', ?)
                    ON CONFLICT (name) DO UPDATE SET value = excluded.value
                    """,
                arguments: [String(cursor)])
        }
    }

    /// Not synced (`write(synced:)`): lost to a power cut, the flag only makes a later replay of
    /// this command count as the redelivery after a crash (no `already_applied` answer; the
    /// command's own ack is recorded either way).
    func markOffsetCommitted(_ commandID: UUID) async throws {
        _ = try await write(synced: false) { db in
            try db.execute(sql: "UPDATE commands SET offset_committed = 1 WHERE command_id = ?", arguments: [commandID.text])
        }
    }

    /// Pending commands in arrival order.
    func pendingCommands() async throws -> [DeviceCommand] {
        try await read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM commands WHERE state = 'pending' ORDER BY rowid").map(Self.command(from:))
        }
    }

    /// Applies `change` and completes `command` with its signed ack in one transaction.
    ///
    /// An `.applied` outcome whose change turned out to be a no-op is recorded as `unchanged`
    /// (`already_applied`, or `healed` for a command fetched at check-in). `beforeCommit` runs last inside the transaction (tests use it to
    /// fail there and show that nothing of the change survives).
    /// - Returns: `nil` when the command was no longer pending (completed concurrently).
    func complete(
        _ command: DeviceCommand, change: LocalChange, outcome: DeviceAck.Outcome, error: String?,
        signer: AckSigner, started: ContinuousClock.Instant, unchanged: DeviceAck.Outcome = .alreadyApplied,
        timer: RotationTimer? = nil, trace: TraceContext? = nil,
        beforeCommit: @escaping @Sendable () throws -> Void = {}, afterCommit: @escaping @Sendable () -> Void = {}
    ) async throws -> (ack: DeviceAck, effect: ChangeEffect)? {
        let (result, onRollbackJournal) = try await writeReportingJournal(erasing: change.erases, afterCommit: afterCommit) {
            db -> (ack: DeviceAck, effect: ChangeEffect)? in
            let startedCPU = timer.map { _ in RotationPhases.threadCPU() }
            let pending = try Bool.fetchOne(
                db, sql: "SELECT state = 'pending' FROM commands WHERE command_id = ?", arguments: [command.commandID.text])
            guard pending == true else { return nil }
            let effect = try Self.apply(change, in: db)
            let final: DeviceAck.Outcome = (outcome == .applied && !effect.changed) ? unchanged : outcome
            let reissue = try Self.reissueOf(command.commandID, in: db)
            let (ack, message) = try signer.ack(
                for: command, outcome: final, effect: effect, duration: ContinuousClock.now - started, error: error,
                originalCommandID: reissue?.original, attempt: reissue?.attempt)
            if let timer, let startedCPU {
                timer.end(\.store)
                timer.add(RotationPhases.threadCPU() - startedCPU, to: \.storeCPU)
            }
            try Self.insertAck(ack, message: message, in: db)
            try db.execute(
                sql: """
                    UPDATE commands SET state = 'done', outcome = ?, records_processed = ?, error = ?, completed_at = ?,
                                        traceparent = coalesce(?, traceparent), tracestate = coalesce(?, tracestate)
                    WHERE command_id = ?
                    """,
                arguments: [
                    final.rawValue, effect.recordsProcessed, error, Date().timeIntervalSince1970, trace?.traceparent,
                    trace?.storableTraceState, command.commandID.text,
                ])
            try beforeCommit()
            return (ack, effect)
        }
        // An erasure committed on the rollback journal is in no file already (its commit zeroed the
        // pages in the database file and unlinked the journal: `WriteAheadJournalTests`), so its ack
        // need not wait for the compaction, which takes two VACUUMs and their checkpoints (up to
        // ~100 ms with ten agents on two cores): the VACUUM runs once the ack is published
        // (`markSent`), or at the next start. An erasure that went through the log (another
        // connection held the database) was scrubbed by `write`; it is compacted here, as before.
        if !onRollbackJournal { try await vacuumIfNeeded() }
        return result
    }

    /// A replayed command (seen, done, offset long committed): answered `already_applied`
    /// with what the device holds now; nothing else changes.
    func ackReplay(_ command: DeviceCommand, signer: AckSigner) async throws -> DeviceAck {
        try await write { db in
            let held = try Self.familyMember(command.familyMemberID, in: db).heldVersion
            let (ack, message) = try signer.ack(
                for: command, outcome: .alreadyApplied, effect: ChangeEffect(changed: false, recordsProcessed: 0, fmkVersion: held),
                duration: .zero, error: nil)
            try Self.insertAck(ack, message: message, in: db)
            return ack
        }
    }

    static func command(from row: Row) throws -> DeviceCommand {
        guard let id = UUID(uuidString: row["command_id"]), let event = UUID(uuidString: row["event_id"]),
            let device = UUID(uuidString: row["device_id"]), let member = UUID(uuidString: row["family_member_id"]),
            let action = DeviceAction(rawValue: row["action"])
        else { throw AgentError(.storage, "a commands row is malformed") }
        return DeviceCommand(
            commandID: id, eventID: event, deviceID: device, action: action, familyMemberID: member,
            newFMKVersion: row["fmk_version"], issuedAt: Date(timeIntervalSince1970: row["issued_at"]))
    }
}
