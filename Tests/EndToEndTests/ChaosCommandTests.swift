import Foundation
import RescindDevKit
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The short variant of `rescind-dev chaos`: a few faults of each kind — the
/// postmaster of its own PostgreSQL killed and restarted, a grant and an audit service killed,
/// agents killed at named steps and paused past the ack deadline, broker request errors, an
/// outage of every broker and one of a partition leader while the others stay up — under a
/// seeded stream of operations, then every invariant counted. The command runs on its own
/// cluster, broker, services and agents, so it needs no stack, only PostgreSQL's server programs.
///
/// The development cluster is librdkafka's mock, in the chaos process. Under Debian's librdkafka
/// 2.0.2 it once aborted that process on one of its own assertions (`!member->resp` in
/// `rd_kafka_mock_cgrp_member_add`: a member's JoinGroup arriving while an earlier one of the same
/// member is still parked), three seconds after every broker came back, in a fresh clone's CI run.
/// So these tests run with a current librdkafka — `scripts/test.sh` runs them in its Tansu pass,
/// with the one `scripts/tansu.sh` puts on `LD_LIBRARY_PATH` (2.16, from the confluent-kafka
/// 2.16.1 wheel), which the chaos process and every process it starts load — and skip under 2.0.x.
@Suite(
    .serialized,
    .enabled(if: ChaosRunConditions.hasPostgres, "needs PostgreSQL's server programs (initdb)"),
    .disabled(
        if: ChaosRunConditions.mockAborts,
        "librdkafka 2.0's mock cluster once aborted the chaos run after an outage: scripts/test.sh runs this in its Tansu pass (librdkafka 2.16)"
    ))
struct ChaosCommandTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let binaries = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()

    static let invariants = [
        "converged", "outbox_published", "revocations_completed", "devices_converged", "records_decrypt",
        "database_constraints", "agent_caches", "audit_chains",
    ]
    static let kinds = [
        "postmaster_kill", "grant_service_kill", "audit_service_kill", "broker_request_errors", "brokers_down", "leader_down",
        "agent_step_kill", "agent_paused",
    ]

    var rescindDev: URL { Self.binaries.appendingPathComponent("rescind-dev") }

    @Test(
        "the short chaos run: every kind of fault strikes and every invariant holds",
        .timeLimit(.minutes(5)))
    func shortChaosRun() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: rescindDev.path), "build the products first (swift build)")
        let result = try await ChildProcess.run(
            rescindDev, ["chaos", "--seed", "18", "--short", "--duration", "150", "--root", Self.repository.path],
            directory: Self.repository, timeout: .seconds(280))
        let output = result.output
        #expect(result.status == 0, "rescind-dev chaos failed (status \(result.status)):\n\(output.suffix(6000))")
        for invariant in Self.invariants {
            #expect(output.contains("invariant \(invariant): ok"), "invariant \(invariant) not reported as holding")
        }
        let faults = output.split(separator: "\n").first { $0.hasPrefix("faults injected: ") }.map(String.init) ?? ""
        for kind in Self.kinds {
            #expect(faults.contains(kind), "no \(kind) struck: \(faults)")
        }
        #expect(output.contains("result: every invariant holds"))
    }

    /// The adversary: whatever ends the chaos run without a word — an abort inside librdkafka, a
    /// test's time limit, an operator's `kill -9`. Nothing it started (two grant and two audit
    /// services, six agents, its PostgreSQL postmaster and backends) may keep running after it.
    @Test(
        "rescind-dev chaos killed with SIGKILL mid-run leaves none of its processes running",
        .timeLimit(.minutes(4)))
    func killedChaosRunLeavesNothingRunning() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: rescindDev.path), "build the products first (swift build)")
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("rescind-chaos-kill-\(UUID().uuidString).log")
        defer { try? FileManager.default.removeItem(at: log) }
        let chaos = try ChildProcess(
            name: "rescind-dev chaos", executable: rescindDev,
            arguments: ["chaos", "--seed", "5", "--short", "--duration", "150", "--root", Self.repository.path],
            directory: Self.repository, output: .file(log))
        var started = false
        let deadline = ContinuousClock.now + .seconds(170)
        while ContinuousClock.now < deadline, chaos.isRunning {
            if chaos.text.contains("operations and faults start") {
                started = true
                break
            }
            try await Task.sleep(for: .milliseconds(200))
        }
        guard started else {
            chaos.killGroup()
            _ = await chaos.exited()
            Issue.record("the chaos run never reached its faults:\n\(chaos.logTail(lines: 30))")
            return
        }
        // Every process below it, taken while all of them run (a fault may be restarting one):
        // two grant and two audit services, six agents, the postmaster (through runuser as root)
        // and its backends.
        var descendants = ProcessTree.descendants(of: chaos.pid)
        let complete = ContinuousClock.now + .seconds(30)
        while !ProcessTree.isComplete(descendants), ContinuousClock.now < complete, chaos.isRunning {
            try await Task.sleep(for: .milliseconds(100))
            descendants = ProcessTree.descendants(of: chaos.pid)
        }
        let programs = descendants.map(\.command)
        #expect(ProcessTree.isComplete(descendants), "not every process of the run was seen running at once: \(programs)")

        chaos.signal(SIGKILL)
        _ = await chaos.exited()
        var alive = descendants.filter(\.isAlive)
        let gone = ContinuousClock.now + .seconds(20)
        while !alive.isEmpty, ContinuousClock.now < gone {
            try await Task.sleep(for: .milliseconds(200))
            alive = alive.filter(\.isAlive)
        }
        // Whatever survived is killed here, so that a failure does not leave it running either.
        for process in alive { kill(process.pid, SIGKILL) }
        #expect(alive.isEmpty, "survived the chaos run: \(alive.map { "\($0.pid) \($0.command)" })")
        // What a killed run cannot remove itself: its work directory and its cluster's. The next
        // run's start removes them (`OwnedDirectory.sweep`, their owner being gone), and nothing
        // else: a directory kept on purpose (no owner) and one whose owner runs stay.
        var left: [String] = []
        for prefix in ["work directory ", "PostgreSQL's directory: "] {
            guard let line = chaos.text.split(separator: "\n").first(where: { $0.contains(prefix) }),
                let range = line.range(of: prefix)
            else { continue }
            left.append(line[range.upperBound...].split(separator: " ").first.map(String.init) ?? "")
        }
        #expect(left.count == 2 && left.allSatisfy { FileManager.default.fileExists(atPath: $0) }, "\(left)")
        let temporary = URL(fileURLWithPath: NSTemporaryDirectory())
        let kept = temporary.appendingPathComponent("rescind-chaos-kept-\(UUID().uuidString.prefix(8))")
        let running = temporary.appendingPathComponent("rescind-chaos-running-\(UUID().uuidString.prefix(8))")
        try OwnedDirectory.create(kept)
        OwnedDirectory.keep(kept)
        try OwnedDirectory.create(running)
        defer {
            for directory in [kept, running] { try? FileManager.default.removeItem(at: directory) }
        }
        let swept = OwnedDirectory.sweep(in: temporary, prefix: "rescind-chaos-")
            + OwnedDirectory.sweep(in: URL(fileURLWithPath: "/var/tmp"), prefix: "rescind-pg-")
        for path in left {
            #expect(!FileManager.default.fileExists(atPath: path), "\(path) left behind after the sweep")
            #expect(swept.map(\.path).contains(path))
            // Whatever the sweep left is removed here, so that a failure does not leave it either.
            if path.hasPrefix(temporary.path) || path.hasPrefix("/var/tmp/rescind-pg-") { try? FileManager.default.removeItem(atPath: path) }
        }
        #expect(FileManager.default.fileExists(atPath: kept.path) && FileManager.default.fileExists(atPath: running.path))
    }
}

/// When the chaos tests can run (their suite's traits).
enum ChaosRunConditions {
    static let hasPostgres = ThrowawayPostgres.findBinaries() != nil
    /// Debian's librdkafka 2.0.x is loaded (its mock cluster once aborted the chaos run).
    static let mockAborts = DevelopmentCluster.librdkafkaVersion.hasPrefix("2.0.")
}

/// The processes below one, read from `/proc` (Linux).
enum ProcessTree {
    struct Entry: Sendable {
        let pid: Int32
        let parent: Int32
        /// `/proc/<pid>/stat`'s start time (clock ticks since boot): a reused pid has another.
        let startTime: String
        let command: String

        /// Still running (a zombie has ended), and still the same process.
        var isAlive: Bool {
            guard let now = ProcessTree.entry(pid), now.startTime == startTime else { return false }
            return ProcessTree.state(pid) != "Z"
        }
    }

    /// Holds the chaos run's processes: two grant and two audit services, six agents and a postmaster.
    static func isComplete(_ entries: [Entry]) -> Bool {
        let programs = entries.map(\.command)
        return programs.filter { $0.hasSuffix("rescind-grant-service") }.count == 2
            && programs.filter { $0.hasSuffix("rescind-audit-service") }.count == 2
            && programs.filter { $0.hasSuffix("rescind-dev") }.count == 6
            && programs.contains { $0.hasSuffix("bin/postgres") }
    }

    static func descendants(of root: Int32) -> [Entry] {
        let all = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap(Int32.init).compactMap(entry)
        var found: [Entry] = []
        var frontier: Set<Int32> = [root]
        while !frontier.isEmpty {
            let children = all.filter { frontier.contains($0.parent) }
            found += children
            frontier = Set(children.map(\.pid))
        }
        return found
    }

    static func entry(_ pid: Int32) -> Entry? {
        guard let fields = statFields(pid), fields.count > 19 else { return nil }
        let command = (try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8))?
            .split(separator: "\0").first.map(String.init) ?? ""
        return Entry(pid: pid, parent: Int32(fields[1]) ?? 0, startTime: fields[19], command: command)
    }

    static func state(_ pid: Int32) -> String? { statFields(pid)?[0] }

    /// The fields of `/proc/<pid>/stat` after the command name: state, ppid, … (starttime is the 20th).
    private static func statFields(_ pid: Int32) -> [String]? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        return stat[stat.index(after: close)...].split(separator: " ").map(String.init)
    }
}
