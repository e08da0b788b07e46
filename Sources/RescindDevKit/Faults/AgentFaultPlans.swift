import DeviceAgent
import Foundation
import RescindClient
import RescindProtocol
import Synchronization

/// The faulting implementations behind the agent's injection point (`AgentFaults`): each
/// makes the agent fail at one chosen point as a crash there would, so that tests can show
/// it converges after a restart.
package enum AgentFaultPlans {
    /// Dies after a command is safely in the inbox and before its Kafka offset is committed,
    /// with its acks still unpublished: `error` ends the agent's service group there.
    package static func crashBeforeOffsetCommit(throwing error: any Error & Sendable) -> AgentFaults {
        var faults = AgentFaults()
        faults.publishAcks = false
        faults.beforeOffsetCommit = { info in if info.commandID != nil { throw error } }
        return faults
    }

    /// Dies inside a command's transaction, after its change and ack were written and before
    /// COMMIT (`AgentError.injectedFault`): the transaction rolls back whole.
    package static func crashInsideCommandTransaction() -> AgentFaults {
        var faults = AgentFaults()
        faults.beforeCommandCommit = { _ in throw AgentError(.injectedFault, "crash inside the transaction") }
        return faults
    }

    /// Records acks but never publishes them, as a process that died before sending.
    package static func acksNeverPublished() -> AgentFaults {
        var faults = AgentFaults()
        faults.publishAcks = false
        return faults
    }

    /// Fails the first attempt at each revocation's command (a `failed` ack), and carries out
    /// the next (a re-issue).
    package static func failFirstAttempt(_ faults: AgentFaults = AgentFaults()) -> AgentFaults {
        var faults = faults
        let seen = Mutex<Set<UUID>>([])
        faults.failCommand = { command in
            seen.withLock { $0.insert(command.eventID).inserted } ? "injected failure of the first attempt" : nil
        }
        return faults
    }

    /// `faults` without the self-heal service, for tests whose subject is the command path.
    package static func withoutSelfHeal(_ faults: AgentFaults = AgentFaults()) -> AgentFaults {
        var faults = faults
        faults.selfHeals = false
        return faults
    }
}
