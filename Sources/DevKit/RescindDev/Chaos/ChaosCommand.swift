import Foundation
import ArgumentParser
import RescindClient
import RescindCrypto
import RescindDevKit
import RescindObservability
import Synchronization

/// `rescind-dev chaos`: real faults under a stream of operations, and what survives them
/// (every process killed at every step, and what was lost counted). Everything runs on its own
/// PostgreSQL cluster, broker, services and agents, so that a postmaster SIGKILL never reaches
/// the shared stack.
struct ChaosCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chaos",
        abstract: "Kill every process at every step under load, then count what survives.",
        discussion: """
            Starts its own PostgreSQL cluster (initdb in a temporary directory, its own port), the \
            development Kafka cluster in this process (three brokers), two grant services, two audit services and \
            six device agents (rescind-dev agent) as processes, and drives a seeded stream of \
            revocations, grants, re-grants, record edits and additions across three family members \
            while a seeded schedule of faults strikes: the postmaster killed with SIGKILL and \
            restarted (during a commit, a relay batch, the audit service's transactions), a grant \
            service killed (upload, commit, relay) and an audit service killed, an agent killed at \
            every named step of a rotation and of an erasure, broker request errors, every broker \
            down for 10-30 s, one broker down while the others stay up (the partitions it leads \
            and the groups it coordinates moved to them, and back when it returns), an agent paused (SIGSTOP) past the ack deadline and resumed. Then it \
            waits for the system to converge and checks every invariant, each with its count; it \
            exits 1 when one fails (2 when the run itself could not go on). The same seed gives the \
            same schedule and the same operations.

            --short strikes a few faults of each kind (about a minute and a half in all) and ends \
            when they have struck; without it, faults strike until --duration has passed.

            Examples:
              rescind-dev chaos --seed 7 --duration 300
              rescind-dev chaos --seed 7 --short --json
            """)

    @Option(help: "Seed of the schedule and the operations.")
    var seed: UInt64 = 1

    @Option(help: "Seconds during which faults strike (with --short: at most).")
    var duration: Int = 300

    @Flag(help: "A few faults of each kind (the test suite's variant).")
    var short = false

    @Flag(help: "Print the report as JSON on standard output (progress goes to standard error).")
    var json = false

    @Flag(help: "Keep the run's directory (logs, agent data) even when every invariant holds.")
    var keep = false

    @Option(help: "The repository root, for the migrations (default: the current directory).")
    var root: String = FileManager.default.currentDirectoryPath

    func validate() throws {
        guard (10...7200).contains(duration) else { throw ValidationError("--duration must be between 10 and 7200 seconds") }
    }

    func run() async throws {
        let repository = URL(fileURLWithPath: root)
        guard FileManager.default.fileExists(atPath: repository.appendingPathComponent("migrations/grant").path) else {
            throw CLIError("no migrations/grant under \(repository.path): run from the repository or pass --root")
        }
        let clock = ContinuousClock.now
        let json = json
        let log: @Sendable (String) -> Void = { message in
            let elapsed = ChaosFaultInjector.seconds(ContinuousClock.now - clock)
            let line = String(format: "[+%8.2f s] ", elapsed) + message + "\n"
            if json { FileHandle.standardError.write(Data(line.utf8)) } else { FileHandle.standardOutput.write(Data(line.utf8)) }
        }
        // What an earlier run killed outside its test left behind (its process gone, nothing kept
        // on purpose): its work directory and its PostgreSQL cluster's (`ThrowawayPostgres` sweeps those).
        let temporary = URL(fileURLWithPath: NSTemporaryDirectory())
        for stale in OwnedDirectory.sweep(in: temporary, prefix: "rescind-chaos-") { log("removed \(stale.path), left by a run that is gone") }
        let work = temporary.appendingPathComponent("rescind-chaos-\(seed)-\(UUID().uuidString.prefix(8).lowercased())")
        log("chaos run: seed \(seed), \(short ? "short variant, at most " : "")\(duration) s of faults; work directory \(work.path)")
        let ackDeadline = 5
        let stack = try await ChaosStack.start(repository: repository, work: work, ackDeadlineSeconds: ackDeadline, log: log)
        let report: ChaosReport
        do {
            report = try await ChaosRun(
                stack: stack, seed: seed, short: short, duration: .seconds(duration), ackDeadlineSeconds: ackDeadline, log: log
            ).play()
        } catch {
            log("the run failed: \(error); logs in \(work.appendingPathComponent("logs").path)")
            OwnedDirectory.keep(work)
            await stack.stop(keepDatabase: true)
            throw ExitCode(2)
        }
        await stack.stop(keepDatabase: !report.holds || keep)
        if json {
            print(try report.json())
        } else {
            print(report.text())
        }
        if report.holds, !keep {
            try? FileManager.default.removeItem(at: work)
        } else {
            OwnedDirectory.keep(work)
            log("kept \(work.path) (logs, agent data)")
        }
        if !report.holds { throw ExitCode(1) }
    }
}

/// One chaos run on a started stack: set-up, operations and faults, convergence, invariants.
struct ChaosRun: Sendable {
    let stack: ChaosStack
    let seed: UInt64
    let short: Bool
    let duration: Duration
    let ackDeadlineSeconds: Int
    let log: @Sendable (String) -> Void

    func play() async throws -> ChaosReport {
        let root = SeededGenerator(seed: seed)
        var setupRandom = root.split(3)
        let workload = try await ChaosWorkload.setUp(
            stack: stack, recordsPerMember: short ? 10 : 16, random: &setupRandom, log: log)
        // Every consumer group gets a coordinator the run knows, so that `leader_down` can move it.
        try await stack.pinCoordinators(
            groups: [ChaosStack.auditGroup] + workload.agents.map { "rescind-agent-\($0.deviceID.uuidString.lowercased())" })
        let schedule = ChaosSchedule.make(
            seed: seed, short: short, agentCount: workload.agents.count, ackDeadlineSeconds: ackDeadlineSeconds)
        let started = ContinuousClock.now
        let deadline = started + duration
        let injector = ChaosFaultInjector(stack: stack, workload: workload, started: started, log: log)
        let operating = ChaosFlag()
        let short = short
        let more: @Sendable () -> Bool = { ContinuousClock.now < deadline }
        log("operations and faults start (\(schedule.infrastructure.count + schedule.agents.count) faults scheduled\(short ? "" : ", struck until the time is up"))")

        let progress = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(15))
                if Task.isCancelled { break }
                let operations = workload.model.operations.withLock { $0 }
                let faults = injector.struck.withLock { $0.filter { $0.outcome == "struck" }.count }
                log("progress: \(faults) faults struck; operations " + operations.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
            }
        }
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<2 {
                let random = root.split(10 + UInt64(worker))
                group.addTask { await workload.run(worker: worker, random: random, running: { operating.isSet }) }
            }
            group.addTask {
                await withTaskGroup(of: Void.self) { lanes in
                    lanes.addTask {
                        await injector.runLane(
                            schedule.infrastructure, random: root.split(20), pause: short ? 500...1500 : 800...3000, more: more)
                    }
                    lanes.addTask {
                        await injector.runLane(
                            schedule.agents, random: root.split(21), pause: short ? 500...1500 : 500...2500, more: more)
                    }
                }
                operating.clear()
                log("faults are over; the operations in flight finish")
            }
        }
        progress.cancel()
        let struck = injector.struck.withLock { $0 }
        let lastFault = struck.map(\.endedAt).max() ?? 0
        let faultsOver = started + .milliseconds(Int(lastFault * 1000))

        // Converge: every row published, every revocation completed, every agent at the server's state.
        let invariants = ChaosInvariants(stack: stack, workload: workload)
        let limit = ContinuousClock.now + .seconds(240)
        var waiting = await invariants.unconverged()
        var lastReport = ContinuousClock.now
        while !waiting.isEmpty, ContinuousClock.now < limit {
            if ContinuousClock.now - lastReport > .seconds(10) {
                log("converging: " + waiting.prefix(4).joined(separator: "; "))
                lastReport = ContinuousClock.now
            }
            try await Task.sleep(for: .milliseconds(250))
            waiting = await invariants.unconverged()
        }
        let converged = waiting.isEmpty
        let convergence = ChaosFaultInjector.seconds(ContinuousClock.now - faultsOver)
        log(converged ? "converged \(String(format: "%.1f", convergence)) s after the last fault" : "NOT converged: " + waiting.joined(separator: "; "))

        // The agents stop (their caches are opened for the checks); the owners read every record.
        for agent in workload.agents { await agent.process.stop() }
        var plaintexts: [UUID: [UUID: [UInt8]]] = [:]
        for member in workload.model.members.withLock({ $0 }) {
            let owner = workload.users[member.owner]
            plaintexts[member.id] = await workload.retrying("read member records", user: owner) { session in
                let (fmk, _) = try await session.currentFMK(member.id)
                var opened: [UUID: [UInt8]] = [:]
                for record in try await session.allRecords(member.id) {
                    if let plaintext = try? RecordCipher.open(record, fmk: fmk) { opened[record.recordID] = plaintext }
                }
                return opened
            }
        }
        var results = try await invariants.check(plaintexts: plaintexts)
        results.insert(
            ChaosInvariant(
                name: "converged", holds: converged,
                detail: converged
                    ? String(format: "everything converged %.1f s after the last fault", convergence)
                    : "not converged within 240 s: " + waiting.joined(separator: "; "),
                counts: ["milliseconds": Int(convergence * 1000)]),
            at: 0)
        let anomalies = workload.model.anomalies.withLock { $0 }
        return ChaosReport(
            seed: seed, short: short, durationSeconds: duration.wholeSeconds,
            elapsedSeconds: ChaosFaultInjector.seconds(ContinuousClock.now - started), operations: workload.model.operations.withLock { $0 },
            faults: struck, convergenceSeconds: convergence, invariants: results, anomalies: anomalies,
            machine: ChaosReport.machine())
    }
}

/// A flag shared by tasks: set until cleared.
final class ChaosFlag: Sendable {
    private let value = Mutex(true)
    var isSet: Bool { value.withLock { $0 } }
    func clear() { value.withLock { $0 = false } }
}
