import Foundation
import DeviceAgent
import RescindDevKit
import RescindObservability
import RescindProtocol
import Synchronization

/// Strikes the faults of a chaos run, one lane at a time, and keeps what struck.
final class ChaosFaultInjector: Sendable {
    struct Struck: Sendable, Codable {
        var kind: String
        var description: String
        var startedAt: Double
        var endedAt: Double
        /// `struck`, or why it could not (`step_not_reached`).
        var outcome: String
    }

    let stack: ChaosStack
    let workload: ChaosWorkload
    let started: ContinuousClock.Instant
    let log: @Sendable (String) -> Void
    let struck = Mutex<[Struck]>([])

    init(stack: ChaosStack, workload: ChaosWorkload, started: ContinuousClock.Instant, log: @escaping @Sendable (String) -> Void) {
        self.stack = stack
        self.workload = workload
        self.started = started
        self.log = log
    }

    var elapsed: Double { Self.seconds(ContinuousClock.now - started) }

    static func seconds(_ duration: Duration) -> Double {
        duration.seconds
    }

    /// Runs a lane's faults in order while `more()` holds (the short variant: all of them),
    /// with a seeded pause between faults.
    func runLane(_ faults: [ChaosFault], random: SeededGenerator, pause: ClosedRange<Int>, more: @Sendable () -> Bool) async {
        var random = random
        for fault in faults {
            guard more() else { return }
            let begin = elapsed
            log("fault: \(fault)")
            let outcome: String
            do {
                outcome = try await strike(fault, random: &random)
            } catch {
                outcome = "error: \(error)"
                log("fault \(fault) failed: \(error)")
            }
            struck.withLock {
                $0.append(Struck(kind: fault.kind, description: fault.description, startedAt: begin, endedAt: elapsed, outcome: outcome))
            }
            try? await Task.sleep(for: .milliseconds(Int.random(in: pause, using: &random)))
        }
    }

    func strike(_ fault: ChaosFault, random: inout SeededGenerator) async throws -> String {
        switch fault {
        case .postmasterKill(let moment, let down):
            await waitFor(moment, grant: nil)
            let pid = await stack.postgres.killPostmaster()
            try await Task.sleep(for: .milliseconds(down))
            try await stack.postgres.restart()
            return pid == nil ? "no_postmaster" : "struck"
        case .grantKill(let index, let moment, let down):
            await waitFor(moment, grant: index)
            await stack.services.grants[index].kill()
            try await Task.sleep(for: .milliseconds(down))
            try await stack.services.grants[index].start()
            return "struck"
        case .auditKill(let index, let down):
            await waitFor(.audit, grant: nil)
            await stack.services.audits[index].kill()
            try await Task.sleep(for: .milliseconds(down))
            try await stack.services.audits[index].start()
            return "struck"
        case .requestErrors(let apis, let count):
            for api in apis {
                let (key, errors) = Self.injected(api)
                try await stack.cluster.pushRequestErrors((0..<count).map { errors[$0 % errors.count] }, for: key)
            }
            try await Task.sleep(for: .seconds(3))
            for api in apis { try await stack.cluster.clearRequestErrors(for: Self.injected(api).0) }
            return "struck"
        case .brokersDown(let seconds):
            for broker in stack.cluster.brokerIDs { try await stack.cluster.setBrokerDown(broker) }
            try await Task.sleep(for: .seconds(seconds))
            for broker in stack.cluster.brokerIDs { try await stack.cluster.setBrokerUp(broker) }
            return "struck"
        case .leaderDown(let broker, let seconds):
            return try await leaderDown(broker, seconds: seconds)
        case .agentStepKill(let index, let action, let step):
            return try await stepKill(workload.agents[index], action, step, random: &random)
        case .agentPause(let index, let seconds):
            let agent = workload.agents[index]
            agent.process.signal(SIGSTOP)
            let pausedAt = ContinuousClock.now
            // A command it must answer while it cannot: its ack is overdue before it resumes.
            _ = await workload.revocation(commanding: agent, .fmkRotation, random: &random)
            let remaining = Duration.seconds(seconds) - (ContinuousClock.now - pausedAt)
            if remaining > .zero { try await Task.sleep(for: remaining) }
            agent.process.signal(SIGCONT)
            return "struck"
        }
    }

    /// One broker down while the others stay up. After a second (the controller noticing), the
    /// partitions it leads move to the live brokers in turn and so do the consumer groups it
    /// coordinates (the audit services' and every agent's); clients find them through their next
    /// metadata or FindCoordinator request. When it is back, both move back to it.
    func leaderDown(_ broker: Int32, seconds: Int) async throws -> String {
        let live = stack.cluster.brokerIDs.filter { $0 != broker }
        try await stack.cluster.setBrokerDown(broker)
        try await Task.sleep(for: .seconds(1))
        let moved = try await stack.moveLeaders(from: broker, to: live)
        let groups = try await stack.moveCoordinators(from: broker, to: live)
        log("broker \(broker) down: \(moved.count) partition leaders and \(groups.count) group coordinators moved to brokers \(live.map(String.init).joined(separator: ","))")
        try await Task.sleep(for: .seconds(seconds))
        try await stack.cluster.setBrokerUp(broker)
        try await Task.sleep(for: .seconds(2))
        for (topic, partition) in moved { try await stack.moveLeader(topic: topic, partition: partition, to: broker) }
        for group in groups { try await stack.moveCoordinator(group: group, to: broker) }
        return moved.isEmpty ? "led_nothing" : "struck"
    }

    /// Freezes `agent` at `step` of the command for `action` (`rescind-dev agent` with
    /// `RESCIND_DEV_AGENT_STOP_AT`), kills it there with SIGKILL, and starts it again.
    func stepKill(_ agent: ChaosAgent, _ action: DeviceAction, _ step: AgentStep, random: inout SeededGenerator) async throws -> String {
        await agent.process.stop()
        try await agent.process.start(extra: ["RESCIND_DEV_AGENT_STOP_AT": step.rawValue, "RESCIND_DEV_AGENT_SELF_HEAL": "false"])
        var outcome = "step_not_reached"
        if await agent.process.waitForLog("partitions assigned", timeout: .seconds(90)) {
            _ = await workload.revocation(commanding: agent, action, random: &random)
            if await agent.process.waitForLog("stopped at step \(step.rawValue)", timeout: .seconds(90)) {
                await agent.process.kill()
                outcome = "struck"
            }
        }
        if outcome != "struck" { log("\(agent.name) did not reach step \(step.rawValue); restarting it") }
        await agent.process.stop()
        try await agent.process.start()
        return outcome
    }

    /// Waits (a bounded time) for the moment a kill should strike: a revocation uploading or
    /// committing (on `grant`, or any), or one just committed (the relay's batch follows at
    /// once; the audit service's transactions a little later, as the acks arrive).
    func waitFor(_ moment: ChaosFault.Moment, grant: Int?) async {
        let signals = workload.signals
        let event: ChaosSignals.Event =
            switch moment {
            case .upload: .uploading
            case .commit: .committing
            case .relay, .audit: .committed
            }
        let before = signals.count(event, grant: grant)
        let deadline = ContinuousClock.now + .seconds(20)
        while signals.count(event, grant: grant) == before, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(5))
        }
        if moment == .audit { try? await Task.sleep(for: .milliseconds(300)) }
    }

    /// The request kind and the retriable errors injected into it.
    static func injected(_ api: DevelopmentClusterAPI) -> (DevelopmentCluster.APIKey, [DevelopmentCluster.InjectedError]) {
        switch api {
        case .produce: (.produce, [.notLeaderForPartition, .requestTimedOut, .notEnoughReplicas, .leaderNotAvailable])
        case .fetch: (.fetch, [.notLeaderForPartition, .leaderNotAvailable])
        case .offsetCommit: (.offsetCommit, [.coordinatorNotAvailable, .notCoordinator])
        case .heartbeat: (.heartbeat, [.rebalanceInProgress, .coordinatorNotAvailable])
        case .metadata: (.metadata, [.leaderNotAvailable])
        }
    }
}
