import Foundation
import Logging
import RescindClient
import RescindObservability
import RescindProtocol

/// Locked and unlocked operation.
///
/// Locked, the agent holds no secret: it still verifies commands (the grant-service key is
/// public) and stores each one sealed to the inbox public key. It carries out erasures at
/// once, since overwriting cached ciphertext under an ephemeral key and deleting the wrapped
/// FMK need no key; their acks cannot be signed yet and wait, sealed, for the unlock. Every
/// other command (rotations) waits in the sealed inbox and runs, in order, after the unlock.
extension AgentEngine {
    var isLocked: Bool { keyRing.isLocked }

    /// Drops the keys. Work in progress finishes first; erasures already in the inbox are
    /// carried out (with signed acks) before the keys go.
    func lock() async throws {
        try await work.withLock {
            guard let keys = keyRing.keys else { return }
            try await processPendingErasures(keys)
            try await mode.withLock { keyRing.set(nil) }
        }
        metrics.locked(true)
        logger.notice("agent locked: keys dropped; commands are sealed until the unlock")
    }

    /// Opens the keystore from the configured unlock source (read again now), then moves
    /// the sealed inbox into the inbox and signs the acks the locked agent owes.
    /// - Throws: `.wrongPassphrase`, `.insecurePermissions`, `.configuration` as at start;
    ///   the agent then stays locked.
    func unlock() async throws {
        guard isLocked else { return }
        let keystore = try await Keystore.open(path: configuration.keystorePath, unlock: configuration.unlock)
        guard keystore.deviceID == identity.deviceID else {
            throw AgentError(.invalidKeystore, "the keystore now belongs to another device; restart the agent")
        }
        let keys = UnlockedKeys(
            keystore, grantServiceURL: configuration.grantServiceURL, tls: configuration.tls, keyHistory: keyHistory,
            violationReporter: violationReporter)
        certifyReceiptKey(keystore)
        try await work.withLock {
            try await mode.withLock { keyRing.set(keys) }
            try await drainSealedInbox(keys)
        }
        metrics.locked(false)
        logger.notice("agent unlocked")
        commandsQueued.signal()
        acksOwed.signal()
    }

    /// A verified command received while locked: sealed; an erasure is carried out now.
    /// Runs under `mode`, so the agent cannot unlock half-way.
    func receiveLocked(_ command: DeviceCommand) async throws -> Receipt {
        let started = ContinuousClock.now
        let sealed = try await store.seal(
            command, to: identity.inboxPublicKey, started: started, receipts: receipts, action: Self.lockedAction(command))
        guard let sealed else { return .ignored }
        var logger = logger
        logger[metadataKey: LogKey.command] = "\(command.commandID.text)"
        if let result = sealed.result {
            logLockedErasure(command, result)
        } else {
            logger.info(
                "command sealed until the unlock",
                metadata: [LogKey.action: "\(command.action.rawValue)", LogKey.familyMemberID: "\(command.familyMemberID.text)"])
        }
        try await store.increment("sealed_commands")
        metrics.received(command.action, locked: true)
        acksOwed.signal()
        return .sealed(seq: sealed.seq)
    }

    /// Erasures that were pending in the clear inbox when the agent started locked.
    func erasePendingWhileLocked() async throws {
        for command in try await store.pendingCommands() where command.action == .secureDeletion {
            let sealed = try await store.seal(
                command, to: identity.inboxPublicKey, started: .now, fromPending: true, action: Self.lockedAction(command))
            if let result = sealed?.result { logLockedErasure(command, result) }
        }
    }

    /// Moves every sealed entry into the inbox (in arrival order) and signs owed acks.
    func drainSealedInbox(_ keys: UnlockedKeys) async throws {
        let entries = try await store.sealedEntries()
        guard !entries.isEmpty else { return }
        var signed = 0
        for entry in entries {
            let opened: SealedCommand
            do {
                opened = try SealedCommand.open(entry.sealed, with: keys.keystore.inboxKey)
            } catch let error as AgentError {
                try await store.discardSealed(entry.seq)
                try await store.increment("sealed_unreadable")
                logger.error("dropped a sealed inbox entry that does not open", metadata: [LogKey.error: "\(error)"])
                continue
            }
            switch try await store.unseal(entry, opened, signer: keys.signer) {
            case .acknowledged, .replayed: signed += 1
            case .queued, .duplicate: break
            }
        }
        logger.notice("sealed inbox opened", metadata: [LogKey.entries: "\(entries.count)", LogKey.acks: "\(signed)"])
        if signed > 0 { acksOwed.signal() }
    }

    /// Carries out the pending erasures with the keys (before a lock drops them).
    private func processPendingErasures(_ keys: UnlockedKeys) async throws {
        for command in try await store.pendingCommands() where command.action == .secureDeletion {
            let started = ContinuousClock.now
            let local = try await store.familyMember(command.familyMemberID)
            guard let (change, outcome) = Self.lockedAction(command)(local),
                let (ack, effect) = try await store.complete(
                    command, change: change, outcome: outcome, error: nil, signer: keys.signer, started: started)
            else { continue }
            acksOwed.signal()
            log(command, decision: CommandDecision.decide(command, local: local), ack: ack, effect: effect, previous: local.heldVersion)
        }
    }

    /// What can be done without keys: an erasure (or nothing, if already done); `nil` for
    /// anything else, which waits for the unlock.
    static func lockedAction(_ command: DeviceCommand) -> AgentStore.LockedAction {
        { local in
            guard command.action == .secureDeletion else { return nil }
            switch CommandDecision.decide(command, local: local) {
            case .erase(let floor): return (.erase(command.familyMemberID, floor: floor), .applied)
            case .alreadyApplied, .rotate: return (.nothing(command.familyMemberID), .alreadyApplied)
            }
        }
    }

    private func logLockedErasure(_ command: DeviceCommand, _ result: SealedCommand.Result) {
        metrics.completed(command.action, outcome: result.outcome, locked: true, duration: .milliseconds(result.durationMs))
        logger.notice(
            result.outcome == .applied
                ? "cryptographically erased cached records and destroyed the FMK while locked; ack signed at unlock"
                : "erasure command already applied (locked); ack signed at unlock",
            metadata: [
                LogKey.command: "\(command.commandID.text)", LogKey.familyMemberID: "\(command.familyMemberID.text)",
                LogKey.outcome: "\(result.outcome.rawValue)", LogKey.records: "\(result.recordsProcessed)",
                LogKey.durationMs: "\(result.durationMs)",
            ])
    }
}
