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

    /// Freezes the whole process (SIGSTOP) the first time a command reaches `step`, after
    /// printing `stopped at step <name>` on standard error: whatever the agent's other tasks
    /// were doing stays exactly where it was, so that a test's SIGKILL lands at that step.
    package static func stop(at step: AgentStep, _ faults: AgentFaults = AgentFaults()) -> AgentFaults {
        var faults = faults
        let reached = StepLatch()
        faults.atStep = { current in
            guard current == step, reached.first() else { return }
            FileHandle.standardError.write(Data("stopped at step \(step.rawValue)\n".utf8))
            raise(SIGSTOP)
        }
        return faults
    }

    /// The plan `rescind-dev agent` runs: `RESCIND_DEV_AGENT_STOP_AT` names a step
    /// (`AgentStep`), and `RESCIND_DEV_AGENT_SELF_HEAL=false` leaves the self-heal service out
    /// (so that a periodic pass does not carry out the command before it reaches the step).
    /// Read by the dev kit only: the product's `rescind-agent` knows neither variable.
    /// - Throws: `AgentFaultPlanError` for a step that does not exist.
    package static func fromEnvironment(_ environment: [String: String]) throws -> AgentFaults {
        var faults = AgentFaults()
        if environment["RESCIND_DEV_AGENT_SELF_HEAL"] == "false" { faults.selfHeals = false }
        guard let name = environment["RESCIND_DEV_AGENT_STOP_AT"], !name.isEmpty else { return faults }
        guard let step = AgentStep(rawValue: name) else {
            throw AgentFaultPlanError(
                description: "RESCIND_DEV_AGENT_STOP_AT: no step \(name) (\(AgentStep.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        return stop(at: step, faults)
    }
}

package struct AgentFaultPlanError: Error, CustomStringConvertible {
    package let description: String
}

/// True for the first caller only.
private final class StepLatch: Sendable {
    private let passed = Mutex(false)

    func first() -> Bool {
        passed.withLock { passed in
            defer { passed = true }
            return !passed
        }
    }
}
