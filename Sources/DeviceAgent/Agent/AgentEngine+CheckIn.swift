import Foundation
import Logging
import RescindClient
import RescindObservability
import RescindProtocol
import RescindTracing
import Tracing

/// Commands missed on the topic, fetched at check-in (the MDM model).
///
/// The grant service keeps every signed command it sent this device
/// (`GET /v1/devices/self/commands`). An agent offline for longer than `device_commands` keeps
/// messages never reads its command there; at each self-heal pass it fetches the ones after its
/// cursor and takes each in through the same verification as a Kafka message (the pinned
/// grant-service key, addressed to this device) into the same inbox, deduplicated by command id.
/// One the device had already moved past by healing is answered `healed`, so the revocation
/// completes instead of staying open for ever.
///
/// A command of a traced revocation comes with its `traceparent`. Taking it in here is not part of
/// the revocation's work (it may come days later): it starts a trace of its own at a `command
/// fetched` span linked to the revocation's trace, which the command's handling and ack continue.
extension AgentEngine {
    static let missedCommandsPageSize = 100

    /// Takes in this device's commands kept by the grant service after the stored cursor.
    /// Called under `work` with the keys (the agent cannot lock meanwhile).
    /// - Returns: how many were new to this device.
    /// - Throws: a transient `AgentError` (grant service unreachable); a refusal by the grant
    ///   service (e.g. one without the route) is logged and the pass goes on without them.
    func fetchMissedCommands(_ fetcher: FamilyMemberFetcher) async throws -> Int {
        var cursor = try await store.commandCursor()
        var new = 0
        while true {
            let page: DeviceCommandList
            do {
                page = try await fetcher.missedCommands(after: cursor)
            } catch let error as AgentError where !error.isTransient && !error.isStorage {
                logger.warning("could not fetch missed commands from the grant service", metadata: [LogKey.error: "\(error)"])
                return new
            }
            for entry in page.commands {
                if try await takeInMissed(entry) { new += 1 }
                cursor = max(cursor, entry.seq)
            }
            try await store.setCommandCursor(cursor)
            if page.commands.count < Self.missedCommandsPageSize { break }
        }
        if new > 0 {
            logger.notice("took in commands missed on the topic", metadata: [LogKey.entries: "\(new)", LogKey.source: "check_in"])
            commandsQueued.signal()
        }
        return new
    }

    /// - Returns: whether the command was new to this device.
    private func takeInMissed(_ entry: DeviceCommandList.Entry) async throws -> Bool {
        switch CommandValidation.validate(key: nil, value: entry.envelope, deviceID: deviceID, serviceKey: configuration.grantServiceKey) {
        case .ignored:
            return false
        case .rejected(let reason):
            try await store.increment("rejected_\(reason.rawValue)")
            metrics.rejected(reason)
            logger.warning(
                "rejected a device command fetched at check-in", metadata: [LogKey.reason: "\(reason.rawValue)", LogKey.source: "check_in"])
            return false
        case .accepted(let command):
            // Known already (read from Kafka, or fetched before): nothing more is owed, and no
            // span to start. `enqueue` decides again in its transaction (Kafka may deliver meanwhile).
            guard try await !store.knows(command.commandID) else { return false }
            let fetched = Self.fetchedSpan(linkedTo: entry.traceparent)
            defer { fetched?.end() }
            guard
                try await mode.withLock({
                    try await store.enqueue(command, source: .checkIn, receipts: receipts, trace: fetched?.context.traceContext)
                }) == .new
            else { return false }
            acksOwed.signal()
            metrics.received(command.action, locked: false)
            logger.info(
                "command received at check-in",
                metadata: [
                    LogKey.command: "\(command.commandID.text)", LogKey.action: "\(command.action.rawValue)",
                    LogKey.familyMemberID: "\(command.familyMemberID.text)", LogKey.fmkVersion: "\(command.newFMKVersion)",
                ])
            return true
        }
    }

    /// A `command fetched` span starting a trace of its own, linked to the revocation's trace
    /// `traceparent` names; `nil` when there is none, it is malformed, or tracing is off.
    static func fetchedSpan(linkedTo traceparent: String?) -> (any Span)? {
        guard let linked = ServiceContext.continuing(traceparent.flatMap { TraceContext(traceparent: $0) }) else { return nil }
        let span = InstrumentationSystem.tracer.startAnySpan("command fetched", context: .topLevel, ofKind: .consumer)
        guard span.context.traceContext != nil else { return nil }
        span.addLink(SpanLink(context: linked, attributes: [:]))
        return span
    }
}
