import Foundation
import Logging
import RescindClient
import RescindKafka
import RescindObservability
import RescindProtocol
import RescindTracing
import Tracing

extension AgentEngine {
    /// What `receive` did with one Kafka message.
    enum Receipt: Equatable, Sendable {
        case ignored
        case rejected(CommandValidation.Rejection)
        /// Stored (or already known); the offset may be committed.
        case stored(commandID: UUID)
        /// Received while locked: sealed into the sealed inbox (an erasure also carried out).
        case sealed(seq: Int64)
        /// A governance notice, kept (or known already); the offset may be committed.
        case noted
    }

    /// Validates a `device_commands` message and, when it is for this device and genuine,
    /// stores it in the inbox. Safe to call again for the same message: a command id is
    /// stored once, and a replay of a completed command is answered `already_applied`.
    /// While locked, a genuine command is sealed instead (`receiveLocked`).
    /// - Throws: only local storage failures (the message is then delivered again).
    func receive(_ message: KafkaMessage) async throws -> Receipt {
        try await mode.withLock { try await receiveUnderMode(message) }
    }

    private func receiveUnderMode(_ message: KafkaMessage) async throws -> Receipt {
        // Cheap checks first: most messages are keyed to other devices, and junk keyed to this one
        // must cost little (it is judged before the device's genuine commands behind it).
        if let key = message.key, String(decoding: key, as: UTF8.self).lowercased() != deviceID.text { return .ignored }
        if let value = message.value, value.count > CommandValidation.maxEnvelopeBytes {
            return try await reject(.oversized, message)
        }
        switch SignedEnvelope.claimedSchema(message.value) {
        case CommandReissue.schema: return try await receiveReissue(message)
        case GovernanceNotice.schema: return try await receiveGovernanceNotice(message)
        default: break
        }
        switch CommandValidation.validate(
            key: message.key, value: message.value, deviceID: deviceID, serviceKey: configuration.grantServiceKey)
        {
        case .ignored:
            return .ignored
        case .rejected(let reason):
            return try await reject(reason, message)
        case .accepted(let command):
            guard let keys = keyRing.keys else { return try await receiveLocked(command) }
            var logger = logger
            logger[metadataKey: LogKey.command] = "\(command.commandID.text)"
            // The producer's trace continues here (nothing when tracing is off or the message
            // carried none); the command's handling continues this span.
            let received = Self.receivedSpan(message)
            defer { received?.end() }
            switch try await store.enqueue(command, receipts: receipts, trace: received?.context.traceContext) {
            case .new:
                logger.info(
                    "command received",
                    metadata: [
                        LogKey.action: "\(command.action.rawValue)", LogKey.familyMemberID: "\(command.familyMemberID.text)",
                        LogKey.fmkVersion: "\(command.newFMKVersion)",
                    ])
                metrics.received(command.action, locked: false)
                commandsQueued.signal()
                acksOwed.signal()
            case .duplicate(done: true, offsetCommitted: true):
                let ack = try await store.ackReplay(command, signer: keys.signer)
                logger.info("replayed command answered already_applied", metadata: [LogKey.fmkVersion: "\(ack.fmkVersion)"])
                acksOwed.signal()
            case .duplicate:
                // Redelivered because its offset was never committed (a crash): its outcome
                // and ack are already recorded or still pending; nothing more is owed.
                logger.info("redelivered command already in the inbox")
            }
            return .stored(commandID: command.commandID)
        }
    }

    /// A `command received` span continuing the trace in the message's headers; `nil` when
    /// they carry none (or tracing is off).
    static func receivedSpan(_ message: KafkaMessage) -> (any Span)? {
        let context = message.serviceContext()
        guard context.traceContext != nil else { return nil }
        let span = InstrumentationSystem.tracer.startAnySpan("command received", context: context, ofKind: .consumer)
        span.attributes["messaging.system"] = "kafka"
        return span
    }

    /// Counts, measures and logs a refused `device_commands` message (`what`: its kind).
    func reject(_ reason: CommandValidation.Rejection, _ message: KafkaMessage, what: String = "device command") async throws -> Receipt {
        try await countRejection(reason.rawValue)
        metrics.rejected(reason)
        logger.warning(
            "rejected a \(what)",
            metadata: [LogKey.reason: "\(reason.rawValue)", LogKey.partition: "\(message.partition)", LogKey.offset: "\(message.offset)"])
        return .rejected(reason)
    }

    /// Carries out every pending command, in arrival order per family member.
    ///
    /// A command that must wait for the grant service holds back only later commands of
    /// its own family member: an erasure, which needs no network, never waits behind a
    /// rotation that does.
    /// - Throws: the first transient `AgentError` (grant service unreachable or behind)
    ///   once everything else was done; those commands stay pending. Storage failures.
    ///
    /// While locked, only erasures run (`erasePendingWhileLocked`); at the first pass after an
    /// unlock the sealed inbox is moved into the inbox first.
    func processPendingCommands() async throws {
        try await work.withLock {
            guard let keys = keyRing.keys else { return try await erasePendingWhileLocked() }
            try await drainSealedInbox(keys)
            var waiting: Set<UUID> = []
            var firstTransient: AgentError?
            for command in try await store.pendingCommands() where !waiting.contains(command.familyMemberID) {
                do {
                    try await process(command, keys: keys)
                } catch let error as AgentError where error.isTransient {
                    waiting.insert(command.familyMemberID)
                    firstTransient = firstTransient ?? error
                }
            }
            if let firstTransient { throw firstTransient }
        }
    }

    /// Handles a command under a span of the trace it arrived in (`fmk rotation`, `secure
    /// deletion`): the grant service's requests of a rotation are its children, and its ack
    /// continues it. A command that came with no trace is handled untraced.
    private func process(_ command: DeviceCommand, keys: UnlockedKeys) async throws {
        guard let context = ServiceContext.continuing(try await store.trace(of: command.commandID)) else {
            return try await process(command, keys: keys, span: nil)
        }
        try await InstrumentationSystem.tracer.withAnySpan(command.action.spanName, context: context) { span in
            try await process(command, keys: keys, span: span)
        }
    }

    private func process(_ command: DeviceCommand, keys: UnlockedKeys, span: (any Span)?) async throws {
        let started = ContinuousClock.now
        let local = try await store.familyMember(command.familyMemberID)
        let decision = CommandDecision.decide(command, local: local)
        // Fetched at check-in after it was missed on the topic: a device already past it got there by healing.
        let unchanged: DeviceAck.Outcome = try await store.source(of: command.commandID) == .checkIn ? .healed : .alreadyApplied
        let change: LocalChange
        var outcome = DeviceAck.Outcome.applied
        var failure: String?
        let injected = faults.failCommand(command)
        // A rotation's phases, for the metrics and the bench (`RotationPhases`).
        let timer: RotationTimer? = if case .rotate = decision, injected == nil { RotationTimer(started: started) } else { nil }
        switch decision {
        case _ where injected != nil:
            change = .nothing(command.familyMemberID)
            outcome = .failed
            failure = injected
        case .alreadyApplied:
            change = .nothing(command.familyMemberID)
            outcome = unchanged
        case .erase(let floor):
            change = .erase(command.familyMemberID, floor: floor)
        case .rotate(let minimum):
            do {
                // Download, verify and re-encrypt: a step span only when the command is traced.
                let fetch = { [store] in
                    try await keys.fetcher.rotation(
                        command.familyMemberID, minimum: minimum, floor: local?.versionFloor ?? 0, store: store, timer: timer)
                }
                if span == nil {
                    change = .rotate(try await fetch())
                } else {
                    change = .rotate(try await InstrumentationSystem.tracer.withAnySpan("fetch and re-encrypt") { _ in try await fetch() })
                }
                faults.atStep(.downloaded)
            } catch let error as AgentError where error.isTransient {
                throw error
            } catch let error as AgentError where error.code == .accessRevoked {
                // Told to rotate, but this user no longer has access: erase rather than keep a key,
                // if the owner signed the exclusion; a bare 403 is no reason (kept and reported).
                let held = local.heldVersion
                let signed = held == 0 ? true : try await keys.fetcher.erasureIsSigned(command.familyMemberID, heldVersion: held)
                if signed {
                    change = .erase(command.familyMemberID, floor: command.newFMKVersion)
                    outcome = .failed
                    failure = "\(error.code): access revoked, cache erased instead"
                } else {
                    await keys.fetcher.reportUnsignedErasure(command.familyMemberID, heldVersion: held)
                    change = .nothing(command.familyMemberID)
                    outcome = .failed
                    failure = "\(AgentError.Code.unsignedErasure): a 403 without an owner statement excluding this user; the copy is kept"
                }
            } catch let error as AgentError {
                change = .nothing(command.familyMemberID)
                outcome = .failed
                failure = "\(error.code): \(error.message)"
            }
        }
        guard
            let (ack, effect) = try await store.complete(
                command, change: change, outcome: outcome, error: failure, signer: keys.signer, started: started,
                unchanged: unchanged, timer: timer, trace: span?.context.traceContext,
                beforeCommit: { [faults] in
                    faults.atStep(.insideTransaction)
                    try faults.beforeCommandCommit(command)
                },
                afterCommit: { [faults] in faults.atStep(.afterEraseCommitBeforeScrub) })
        else { return }
        span?.attributes["rescind.outcome"] = ack.outcome.rawValue
        span?.attributes["rescind.records"] = effect.recordsProcessed
        if ack.outcome == .failed { span?.setStatus(SpanStatus(code: .error)) }
        if let timer, ack.outcome == .applied { rotationLog.committed(ack.ackID, timer: timer, at: .now) }
        faults.atStep(.committed)
        acksOwed.signal()
        log(command, decision: decision, ack: ack, effect: effect, previous: local.heldVersion)
    }

    func log(_ command: DeviceCommand, decision: CommandDecision, ack: DeviceAck, effect: ChangeEffect, previous: Int) {
        var metadata: Logger.Metadata = [
            LogKey.command: "\(command.commandID.text)", LogKey.familyMemberID: "\(command.familyMemberID.text)",
            LogKey.action: "\(command.action.rawValue)", LogKey.outcome: "\(ack.outcome.rawValue)",
            LogKey.records: "\(effect.recordsProcessed)", LogKey.fmkVersion: "\(effect.fmkVersion)",
            LogKey.previousFMKVersion: "\(previous)", LogKey.durationMs: "\(ack.durationMs)",
        ]
        if let error = ack.error { metadata[LogKey.error] = "\(error)" }
        metrics.completed(command.action, outcome: ack.outcome, locked: false, duration: .milliseconds(ack.durationMs))
        if case .alreadyApplied(let reason) = decision { metadata[LogKey.reason] = "\(reason)" }
        switch (ack.outcome, command.action) {
        case (.applied, .fmkRotation): logger.notice("rotated FMK and re-keyed the cache", metadata: metadata)
        case (.applied, .secureDeletion): logger.notice("cryptographically erased cached records and destroyed the FMK", metadata: metadata)
        case (.alreadyApplied, _): logger.info("command already applied", metadata: metadata)
        case (.healed, _): logger.notice("command missed on the topic, already healed past", metadata: metadata)
        case (.delivered, _), (.notNow, _): logger.info("command receipt", metadata: metadata)
        case (.failed, _): logger.error("command failed", metadata: metadata)
        }
    }
}

extension DeviceAction {
    /// The name of the span that handles a command of this action.
    var spanName: String {
        switch self {
        case .fmkRotation: "fmk rotation"
        case .secureDeletion: "secure deletion"
        }
    }
}
