import Foundation
import RescindClient
import RescindDevKit

/// Command-line options of `rescind-bench`. Every size has a default that fits this
/// 2-core, 24 GiB machine; `--quick` shrinks them to check the instrument itself.
struct BenchOptions: Sendable {
    enum Section: String, CaseIterable, Sendable {
        case crypto, commit, fanout, throughput, memory, keyhistory, fleet, load, tracing

        /// Sections that use the shared stack (tracing starts stacks of its own; crypto and fleet none).
        var needsStack: Bool { self != .crypto && self != .fleet && self != .tracing }

        /// What a run without `--sections` measures: docs/benchmarks.md's figures. The load section
        /// (docs/reliability.md's) and the tracing section (which turns tracing on in this process
        /// for good) are asked for by name.
        static let defaults = allCases.filter { $0 != .load && $0 != .tracing }
    }

    var sections: [Section] = Section.defaults
    /// Repetitions of each figure; the table quotes medians.
    var runs = 5
    /// Records in the re-encryption kernel runs.
    var kernelRecords = 20_000
    var recordBytes = 2048
    var commitSizes = [1_000, 10_000, 100_000]
    /// Repetitions of the commit figure for sizes above 10,000 (they take long).
    var largeCommitRuns = 3
    var uploadBatch = 500
    /// Upload batches in flight at once (the client's default unless given).
    var uploadsInFlight = UserSession.uploadsInFlight
    var agentCounts = [1, 10, 50]
    var recordsPerAgent = 500
    /// Measured revocations per agent count (after one warm-up); in the tracing section, pairs per phase.
    var revocations = 20
    /// The tracing section's phases (which of its two stacks is traced: A, B, B, A, …).
    var tracingPhases = 6
    /// `fetch.wait.max.ms` of every consumer the bench creates (agents and its own tails).
    var fetchWaitMilliseconds = 25
    /// The agents' `receiptHold` (`--receipt-hold-ms`, 0: receipts sent at once); `nil` keeps the agent's default.
    var receiptHoldMilliseconds: Int?
    var sustainedWorkers = 8
    var sustainedRevocationsPerWorker = 20
    var smallFamilyMemberRecords = 50
    var outboxEvents = 20_000
    /// The grant service's `RESCIND_OUTBOX_BATCH_SIZE`; `nil` keeps its default (500).
    var outboxBatch: Int?
    var agentMemoryRecords = 10_000
    /// Added to the grant service's environment (`--grant-env NAME=VALUE`, repeatable): a run
    /// with other limits, pool or lifetimes than the defaults, said in the header as given.
    var grantEnvironment: [String: String] = [:]
    /// The load section's sizes (`--load-…`).
    var load = LoadBench.Options()
    /// An external Kafka-protocol broker to run on instead of the in-process development
    /// cluster (`--kafka-bootstrap-servers`, e.g. Tansu); its topics are provisioned through
    /// the Admin API. Run with the librdkafka that broker needs on `LD_LIBRARY_PATH`.
    var kafkaBootstrapServers: String?
    /// What the report calls the broker.
    var brokerName: String { kafkaBootstrapServers.map { "external broker \($0)" } ?? "development broker (librdkafka mock cluster)" }
    /// The fleet model's inputs (`--fleet-…`), the fleet sizes, and the inputs given explicitly.
    var fleet = FleetInputs()
    var fleetDevices = [100_000, 1_000_000]
    var fleetExplicit: Set<String> = []
    /// `--json`: the fleet section's figures as JSON on standard output, after the table.
    var json = false
    var databaseURL = TestDatabases.url
    var repositoryRoot = FileManager.default.currentDirectoryPath

    static let usage = """
        usage: rescind-bench [--quick] [--sections crypto,commit,fanout,throughput,memory,keyhistory,fleet,load,tracing] [--runs N]
                             [--kernel-records N] [--commit-sizes 1000,10000,100000] [--upload-batch N] [--uploads-in-flight N]
                             [--agents 1,10,50] [--revocations N] [--tracing-phases N] [--fetch-wait-ms N] [--receipt-hold-ms N]
                             [--outbox-events N] [--outbox-batch N] [--agent-memory-records N]
                             [--kafka-bootstrap-servers HOST:PORT]
                             [--load-devices N] [--load-seconds N] [--load-rounds N] [--load-flood-factor N]
                             [--load-cycle-ms N] [--load-addresses N] [--load-connections N] [--grant-env RESCIND_NAME=VALUE]…
        \(FleetOptions.usage)
        Run from the repository root (it reads migrations/ and starts the services built next to it).
        RESCIND_DATABASE_URL selects PostgreSQL (default: the local stack's).
        """

    init(arguments: [String]) throws {
        var remaining = arguments[...]
        func value(_ name: String) throws -> String {
            guard let next = remaining.popFirst() else { throw BenchError("\(name) needs a value\n\(Self.usage)") }
            return next
        }
        func integer(_ name: String) throws -> Int {
            guard let number = Int(try value(name)), number > 0 else { throw BenchError("\(name) needs a positive integer") }
            return number
        }
        func integers(_ name: String) throws -> [Int] {
            let list = try value(name).split(separator: ",").compactMap { Int($0) }
            guard !list.isEmpty, list.allSatisfy({ $0 > 0 }) else { throw BenchError("\(name) needs positive integers, comma separated") }
            return list
        }
        while let argument = remaining.popFirst() {
            switch argument {
            case "--quick":
                runs = 3
                kernelRecords = 4_000
                commitSizes = [1_000, 5_000]
                largeCommitRuns = 2
                agentCounts = [1, 5]
                revocations = 5
                tracingPhases = 2
                sustainedWorkers = 4
                sustainedRevocationsPerWorker = 3
                outboxEvents = 2_000
                agentMemoryRecords = 1_000
                load = .quick
            case "--sections":
                sections = try value(argument).split(separator: ",").map { name in
                    guard let section = Section(rawValue: String(name)) else { throw BenchError("unknown section \(name)") }
                    return section
                }
            case "--runs": runs = try integer(argument)
            case "--kernel-records": kernelRecords = try integer(argument)
            case "--commit-sizes": commitSizes = try integers(argument)
            case "--upload-batch": uploadBatch = try integer(argument)
            case "--uploads-in-flight": uploadsInFlight = try integer(argument)
            case "--agents": agentCounts = try integers(argument)
            case "--revocations": revocations = try integer(argument)
            case "--tracing-phases": tracingPhases = try integer(argument)
            case "--fetch-wait-ms": fetchWaitMilliseconds = try integer(argument)
            case "--receipt-hold-ms":
                guard let number = Int(try value(argument)), number >= 0 else { throw BenchError("\(argument) needs an integer ≥ 0") }
                receiptHoldMilliseconds = number
            case "--outbox-events": outboxEvents = try integer(argument)
            case "--outbox-batch": outboxBatch = try integer(argument)
            case "--agent-memory-records": agentMemoryRecords = try integer(argument)
            case "--kafka-bootstrap-servers": kafkaBootstrapServers = try value(argument)
            case "--load-devices": load.devices = try integer(argument)
            case "--load-seconds": load.seconds = Double(try integer(argument))
            case "--load-rounds": load.rounds = try integer(argument)
            case "--load-flood-factor": load.floodFactor = Double(try integer(argument))
            case "--load-cycle-ms": load.cycle = .milliseconds(try integer(argument))
            case "--load-addresses":
                load.addresses = try integer(argument)
                guard load.addresses <= 240 else { throw BenchError("\(argument) is at most 240 (127.0.0.10–127.0.0.249)") }
            case "--load-connections": load.connections = try integer(argument)
            case "--grant-env":
                let setting = try value(argument)
                guard let equals = setting.firstIndex(of: "="), setting.hasPrefix("RESCIND_") else {
                    throw BenchError("\(argument) needs RESCIND_NAME=VALUE")
                }
                grantEnvironment[String(setting[..<equals])] = String(setting[setting.index(after: equals)...])
            case "--fleet-devices": fleetDevices = try integers(argument)
            case "--json": json = true
            case "--help", "-h": throw BenchError(Self.usage)
            case let option where option.hasPrefix("--fleet-"):
                let name = String(option.dropFirst("--fleet-".count))
                guard try FleetOptions.apply(name: name, value: try value(argument), to: &fleet) else {
                    throw BenchError("unknown option \(argument)\n\(Self.usage)")
                }
                fleetExplicit.insert(name)
            default: throw BenchError("unknown option \(argument)\n\(Self.usage)")
            }
        }
    }

    /// What the table header repeats, so a result always says how it was produced.
    var summary: String {
        "sections=\(sections.map(\.rawValue).joined(separator: ",")) runs=\(runs) kernel-records=\(kernelRecords) "
            + "commit-sizes=\(commitSizes.map(String.init).joined(separator: ",")) upload-batch=\(uploadBatch) uploads-in-flight=\(uploadsInFlight) "
            + "agents=\(agentCounts.map(String.init).joined(separator: ",")) revocations=\(revocations) "
            + "fetch-wait-ms=\(fetchWaitMilliseconds) receipt-hold-ms=\(receiptHoldMilliseconds.map(String.init) ?? "default") outbox-events=\(outboxEvents) outbox-batch=\(outboxBatch.map(String.init) ?? "default") agent-memory-records=\(agentMemoryRecords) fleet-devices=\(fleetDevices.map(String.init).joined(separator: ",")) "
            + "load-devices=\(load.devices) load-seconds=\(Int(load.seconds)) load-rounds=\(load.rounds) load-flood-factor=\(Int(load.floodFactor)) "
            + "load-cycle-ms=\(Int(Timing.seconds(load.cycle) * 1000)) load-addresses=\(load.addresses) load-connections=\(load.connections) "
            + "grant-env=\(grantEnvironment.isEmpty ? "default" : grantEnvironment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")) broker=\(kafkaBootstrapServers ?? "development")"
    }
}
