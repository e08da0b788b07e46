import DeviceAgent
import Foundation
import RescindDevKit
import RescindProtocol

/// One fault of a chaos run.
enum ChaosFault: Sendable, CustomStringConvertible {
    /// When a kill strikes, as far as timing allows.
    enum Moment: String, Sendable { case upload, commit, relay, audit }

    /// PostgreSQL's postmaster killed with SIGKILL, restarted after `downMs`.
    case postmasterKill(Moment, downMs: Int)
    /// A grant service killed with SIGKILL, restarted after `downMs`.
    case grantKill(Int, Moment, downMs: Int)
    /// An audit service killed with SIGKILL mid-stream, restarted after `downMs`.
    case auditKill(Int, downMs: Int)
    /// The broker answers the next requests of these kinds with retriable errors.
    case requestErrors([DevelopmentClusterAPI], count: Int)
    /// Every broker down for `seconds`.
    case brokersDown(seconds: Int)
    /// One broker down for `seconds` while the others stay up: the partitions it leads and the
    /// consumer groups it coordinates move to the live brokers, as a controller moves them, and
    /// back once it returns (a preferred-leader election).
    case leaderDown(broker: Int32, seconds: Int)
    /// An agent frozen at a named step of the command for `action` and killed there.
    case agentStepKill(agent: Int, DeviceAction, AgentStep)
    /// An agent paused (SIGSTOP) for `seconds`, past the ack deadline, then resumed.
    case agentPause(agent: Int, seconds: Int)

    /// The kind, for counting faults by kind.
    var kind: String {
        switch self {
        case .postmasterKill: "postmaster_kill"
        case .grantKill: "grant_service_kill"
        case .auditKill: "audit_service_kill"
        case .requestErrors: "broker_request_errors"
        case .brokersDown: "brokers_down"
        case .leaderDown: "leader_down"
        case .agentStepKill: "agent_step_kill"
        case .agentPause: "agent_paused"
        }
    }

    var description: String {
        switch self {
        case .postmasterKill(let moment, let down): "postmaster SIGKILL (\(moment.rawValue)), down \(down) ms"
        case .grantKill(let index, let moment, let down): "grant service \(index) SIGKILL (\(moment.rawValue)), down \(down) ms"
        case .auditKill(let index, let down): "audit service \(index) SIGKILL, down \(down) ms"
        case .requestErrors(let apis, let count): "\(count) request errors on \(apis.map(\.rawValue).joined(separator: ","))"
        case .brokersDown(let seconds): "all brokers down \(seconds) s"
        case .leaderDown(let broker, let seconds): "broker \(broker) (a partition leader) down \(seconds) s, the others up"
        case .agentStepKill(let agent, let action, let step): "agent \(agent) SIGKILL at \(action.rawValue)/\(step.rawValue)"
        case .agentPause(let agent, let seconds): "agent \(agent) SIGSTOP \(seconds) s, then SIGCONT"
        }
    }
}

/// The Kafka requests the chaos run injects errors into (named for the report).
enum DevelopmentClusterAPI: String, Sendable, CaseIterable {
    case produce, fetch, offsetCommit, heartbeat, metadata
}

/// The seeded schedule of a run: two lanes that strike concurrently, the infrastructure's
/// (PostgreSQL, services, broker) and the agents'. Every kind comes round in each cycle, in
/// a seeded order; the agents' step kills cycle through every step of a rotation and of an
/// erasure (`AgentStep.steps(of:)`).
struct ChaosSchedule: Sendable {
    var infrastructure: [ChaosFault]
    var agents: [ChaosFault]

    /// - Parameters:
    ///   - short: a few of each kind (the suite's variant); otherwise cycles enough for `cycles`.
    ///   - agentCount: agents that may be stopped or killed (indices `0..<agentCount`).
    static func make(seed: UInt64, short: Bool, agentCount: Int, ackDeadlineSeconds: Int) -> ChaosSchedule {
        let root = SeededGenerator(seed: seed)
        var infra = root.split(1)
        var agentRandom = root.split(2)
        let cycles = short ? 1 : 40
        var infrastructure: [ChaosFault] = []
        for cycle in 0..<cycles {
            var round: [ChaosFault] = []
            let moments: [ChaosFault.Moment] = short ? [.commit, .relay] : [.commit, .relay, .audit]
            for moment in moments {
                round.append(.postmasterKill(moment, downMs: Int.random(in: 300...2500, using: &infra)))
            }
            let grantMoments: [ChaosFault.Moment] = short ? [.upload, .commit] : [.upload, .commit, .relay]
            for moment in grantMoments {
                round.append(.grantKill(Int.random(in: 0...1, using: &infra), moment, downMs: Int.random(in: 200...2000, using: &infra)))
            }
            round.append(.auditKill(cycle % 2, downMs: Int.random(in: 200...2000, using: &infra)))
            if !short { round.append(.auditKill((cycle + 1) % 2, downMs: Int.random(in: 200...2000, using: &infra))) }
            let apis = DevelopmentClusterAPI.allCases.shuffled(using: &infra).prefix(Int.random(in: 1...3, using: &infra))
            round.append(.requestErrors(Array(apis), count: Int.random(in: 3...12, using: &infra)))
            if !short {
                let more = DevelopmentClusterAPI.allCases.shuffled(using: &infra).prefix(2)
                round.append(.requestErrors(Array(more), count: Int.random(in: 3...12, using: &infra)))
            }
            // Outages last 10-30 s; one per cycle keeps most of the run under other faults.
            round.append(.brokersDown(seconds: short ? 10 : Int.random(in: 10...30, using: &infra)))
            round.append(
                .leaderDown(
                    broker: Int32.random(in: 1...Int32(ChaosStack.brokers), using: &infra),
                    seconds: short ? 8 : Int.random(in: 8...20, using: &infra)))
            infrastructure += round.shuffled(using: &infra)
        }

        let steps = [DeviceAction.fmkRotation, .secureDeletion].flatMap { action in AgentStep.steps(of: action).map { (action, $0) } }
        var agents: [ChaosFault] = []
        for cycle in 0..<cycles {
            var round: [ChaosFault] = []
            // The short variant strikes three steps (one of them an erasure); the long run every step.
            let chosen =
                short
                ? Array(steps.filter { $0.0 == .fmkRotation }.shuffled(using: &agentRandom).prefix(2))
                    + Array(steps.filter { $0.0 == .secureDeletion }.shuffled(using: &agentRandom).prefix(1))
                : steps
            for (action, step) in chosen {
                round.append(.agentStepKill(agent: Int.random(in: 0..<agentCount, using: &agentRandom), action, step))
            }
            round.append(.agentPause(agent: Int.random(in: 0..<agentCount, using: &agentRandom), seconds: ackDeadlineSeconds + 3))
            if !short, cycle % 2 == 0 {
                round.append(.agentPause(agent: Int.random(in: 0..<agentCount, using: &agentRandom), seconds: ackDeadlineSeconds + 3))
            }
            agents += round.shuffled(using: &agentRandom)
        }
        return ChaosSchedule(infrastructure: infrastructure, agents: agents)
    }
}
