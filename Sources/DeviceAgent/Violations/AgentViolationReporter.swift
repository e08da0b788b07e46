import Foundation
import Logging
import RescindClient
import RescindObservability
import RescindProtocol
import Synchronization

/// An agent's `KeyChainViolationReporting`: signs the report with this device's key as
/// `device:<uuid>` and queues it in the ack outbox, which `AckPublisherService` publishes to
/// `device_acks` (keyed by device id) and marks sent only once the broker acknowledged it —
/// so a report survives a broker outage and a restart like an ack. The audit service tells
/// the two apart by the envelope's schema and deduplicates reports by `report_id`.
///
/// Never throws back and never waits for the broker: the caller (the key-history verifier)
/// only pays for one local write. A locked agent holds no device key and cannot sign: the
/// report is logged and dropped (verification needs the unlocked keys, so it does not run then).
struct AgentViolationReporter: KeyChainViolationReporting {
    let engine: AgentEngine
    /// Attempts at the local write before the report is given up (logged).
    var attempts = 5

    func report(_ violation: KeyChainViolation) async {
        let logger = engine.logger
        var metadata: Logger.Metadata = [
            LogKey.familyMemberID: "\(violation.familyMemberID.text)", LogKey.reason: "\(violation.code.rawValue)",
        ]
        guard let signer = engine.keyRing.keys?.signer else {
            logger.error("key chain violation not reported: the agent is locked and cannot sign", metadata: metadata)
            return
        }
        let message: Data
        do {
            message = try signer.violation(violation)
        } catch {
            metadata[LogKey.error] = "\(error)"
            logger.error("key chain violation not reported: it cannot be signed", metadata: metadata)
            return
        }
        if await queue(violation.reportID, message) {
            logger.warning("key chain violation reported", metadata: metadata)
            return
        }
        // The local store is busy or failing: keep trying in the background, never in the caller.
        let engine = self.engine, attempts = self.attempts
        Task.detached {
            var backoff = Backoff(first: engine.configuration.retryInterval, maximum: engine.configuration.retryInterval * 4)
            for _ in 1..<max(attempts, 2) {
                try? await Task.sleep(for: backoff.next())
                if await Self.queue(engine, violation.reportID, message) { return }
            }
            engine.logger.error("key chain violation not reported: the local store refused it", metadata: metadata)
        }
    }

    private func queue(_ reportID: UUID, _ message: Data) async -> Bool {
        await Self.queue(engine, reportID, message)
    }

    private static func queue(_ engine: AgentEngine, _ reportID: UUID, _ message: Data) async -> Bool {
        do {
            try await engine.store.queueMessage(id: reportID, message: message)
            engine.acksOwed.signal()
            return true
        } catch {
            return false
        }
    }
}

/// The reporter an engine hands to its sessions before the engine itself exists: it forwards to
/// the one bound once the engine is built (the engine's own `AgentViolationReporter`, unless the
/// caller chose another). A report made before binding (none is: sessions verify only once the
/// engine runs) is logged by nobody and dropped.
final class BoundViolationReporter: KeyChainViolationReporting {
    private let target = Mutex<(any KeyChainViolationReporting)?>(nil)

    func bind(_ reporter: any KeyChainViolationReporting) {
        target.withLock { $0 = reporter }
    }

    func report(_ violation: KeyChainViolation) async {
        guard let reporter = target.withLock({ $0 }) else { return }
        await reporter.report(violation)
    }
}
