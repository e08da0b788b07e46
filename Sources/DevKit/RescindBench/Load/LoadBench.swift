import Foundation
import RescindClient
import RescindCrypto
import RescindProtocol
import Synchronization

/// 6. Load: simulated devices against the live grant service, alone and beside an abusive
/// client ten times their request rate, from one source address and then from many.
///
/// Each honest device is a registered user with a family member, run through the real client
/// (`GrantServiceClient`, the shared connection pool): every cycle it fetches its wrapped key,
/// reads a page of the change feed and writes a record; every `refreshEvery`-th cycle it first
/// renews its token (challenge and token, sent with the live token: the device's own lane). Every operation is timed; p50 and
/// p99 are over operations. Every honest device connects from 127.0.0.1; the flood binds other
/// loopback addresses (`Flood`), so a per-address budget the flood spends is never the honest
/// devices' own. The target: with the flood, the honest p99 within 2× of its value without,
/// and no honest operation refused.
enum LoadBench {
    struct Options: Sendable {
        var devices = 20
        /// Measured seconds per phase.
        var seconds = 10.0
        /// Flood requests a second per honest request a second (measured without the flood).
        var floodFactor = 10.0
        /// One honest device's cycle.
        var cycle: Duration = .seconds(1)
        /// Source addresses of the flood "from many addresses".
        var addresses = 32
        /// Connections of the flood "from one address".
        var connections = 32
        var refreshEvery = 5
        var recordBytes = 1024
        /// Rounds of the three phases (without, from one address, from many), alternated so that
        /// what happens to the machine now and then (a stall of every operation at once, with or
        /// without a flood) falls on any phase; each kind is judged by its median p99 over the rounds.
        var rounds = 3

        static let quick = Options(devices: 8, seconds: 4, addresses: 16, connections: 16, rounds: 1)
    }

    /// An honest device: its client, its family member and that member's key.
    struct Device: Sendable {
        let session: UserSession
        let familyMemberID: UUID
        let fmk: SecretKey
    }

    /// The honest devices' operations in one phase.
    struct Honest: Sendable {
        var latencies: [Double] = []
        /// The token renewals alone (challenge and token, the requests the flood sends too).
        var renewals: [Double] = []
        /// The slowest operations: what, when into the phase, how long (where the tail comes from).
        var slowest: [(name: String, at: Double, seconds: Double)] = []
        var requests = 0
        var refused = 0
        var refusals: [String: Int] = [:]
        /// Requests shed (503 `overloaded`) and served when the client asked again after
        /// `Retry-After`: not refused, but their operation waited for it.
        var retriedAfterShedding = 0
        var elapsed = 0.0
        var started = ContinuousClock.now

        var p50: Double { Statistics.percentile(latencies, 50) }
        var p99: Double { Statistics.percentile(latencies, 99) }
        var rate: Double { elapsed > 0 ? Double(requests) / elapsed : 0 }

        var summary: String {
            "p50 \(Format.duration(p50)), p99 \(Format.duration(p99)), \(String(format: "%.0f", rate)) requests/s, "
                + "\(latencies.count) operations, \(refused) refused, \(retriedAfterShedding) requests shed and retried; renewals alone p50 \(Format.duration(Statistics.percentile(renewals, 50))), "
                + "p99 \(Format.duration(Statistics.percentile(renewals, 99)))"
        }
    }

    /// The three phases of a round.
    enum Kind: String, Sendable, CaseIterable {
        case withoutFlood = "without flood"
        case oneAddress = "flood from one address"
        case manyAddresses = "flood from many addresses"
    }

    struct Phase: Sendable {
        let kind: Kind
        let round: Int
        let name: String
        let honest: Honest
        let flood: Flood.Counts?
        var cpu = CPUUsage()
    }

    /// Everything measured, for the report and for the test.
    struct Result: Sendable {
        let phases: [Phase]
        let floodTarget: Double
        var flooded: [Phase] { phases.filter { $0.flood != nil } }
        var honestRefused: Int { phases.reduce(0) { $0 + $1.honest.refused } }

        /// The median over the rounds of the honest p99 of one phase kind.
        func medianP99(_ kind: Kind) -> Double {
            Statistics.percentile(phases.filter { $0.kind == kind }.map(\.honest.p99), 50)
        }

        /// The worse flood kind's median p99 against the median p99 without a flood.
        var worstRatio: Double {
            max(medianP99(.oneAddress), medianP99(.manyAddresses)) / medianP99(.withoutFlood)
        }
        var targetMet: Bool { honestRefused == 0 && worstRatio <= 2 }
    }

    static func run(stack: BenchStack, options: Options, report: BenchReport) async throws -> Result {
        report.begin("6. Load: \(options.devices) honest devices beside a flood of \(Int(options.floodFactor))× their requests")
        guard let port = stack.grantURL.port.map(UInt16.init) else { throw BenchError("the grant service's URL has no port") }
        var devices: [Device] = []
        for index in 0..<options.devices {
            let user = try await stack.user("Load device \(index)")
            let (familyMemberID, fmk) = try await user.session.createFamilyMember()
            devices.append(
                Device(
                    session: user.session, familyMemberID: familyMemberID, fmk: fmk))
        }
        // The flood's own accounts, whose devices it mints tokens for.
        var floodDevices: [Flood.Device] = []
        for index in 0..<4 {
            let user = try await stack.user("Flood account \(index)")
            floodDevices.append(Flood.Device(deviceID: user.firstDevice.deviceID, key: user.firstDevice.deviceKey))
        }
        let registrations = try Flood.registrationBodies(count: 500)

        _ = try await honestPhase(devices, options: options, seconds: min(2, options.seconds))  // warm-up, not counted
        var phases: [Phase] = []
        let grantPID = stack.grant.pid
        func record(_ phase: Phase, since start: CPUUsage.Sample) {
            var phase = phase
            phase.cpu = CPUUsage.between(start, CPUUsage.sample(grantPID: grantPID))
            phases.append(phase)
            var line = "load \(phase.name): honest \(phase.honest.summary)"
            if !phase.honest.refusals.isEmpty { line += " (\(phase.honest.refusals.map { "\($0.key) ×\($0.value)" }.joined(separator: ", ")))" }
            if let flood = phase.flood { line += "; flood \(describe(flood))" }
            let slowest = phase.honest.slowest.sorted { $0.seconds > $1.seconds }.prefix(8)
            line += "; slowest: " + slowest.map { "\($0.name) at \(String(format: "%.1f", $0.at)) s \(Format.duration($0.seconds))" }.joined(separator: ", ")
            BenchReport.log(line + "; CPU (cores): " + phase.cpu.summary)
        }
        var target = 0.0
        let floodSources: [Kind: (sources: [String], perSource: Int)] = [
            .oneAddress: (["127.0.0.2"], options.connections),
            .manyAddresses: ((0..<options.addresses).map { "127.0.0.\(10 + $0)" }, 1),
        ]
        for round in 1...max(1, options.rounds) {
            for kind in Kind.allCases {
                let name = "round \(round), " + kind.rawValue
                let start = CPUUsage.sample(grantPID: grantPID)
                guard let (sources, perSource) = floodSources[kind] else {
                    let honest = try await honestPhase(devices, options: options, seconds: options.seconds)
                    // The flood's rate: ten times what the honest devices asked in the first round.
                    if target == 0 { target = options.floodFactor * honest.rate }
                    record(Phase(kind: kind, round: round, name: name, honest: honest, flood: nil), since: start)
                    continue
                }
                let flood = Flood(
                    sources: sources, connectionsPerSource: perSource, rate: target, port: port, registrations: registrations,
                    devices: floodDevices)
                let stop = Locked(false)
                let flooding = Task { await flood.run(until: stop) }
                // The flood reaches its rate before the honest devices are measured.
                try await Task.sleep(for: .milliseconds(500))
                let honest: Honest
                do {
                    honest = try await honestPhase(devices, options: options, seconds: options.seconds)
                } catch {
                    stop.withLock { $0 = true }
                    _ = await flooding.value
                    throw error
                }
                stop.withLock { $0 = true }
                record(Phase(kind: kind, round: round, name: name, honest: honest, flood: await flooding.value), since: start)
            }
        }

        let result = Result(phases: phases, floodTarget: target)
        let baseline = result.medianP99(.withoutFlood)
        for phase in phases {
            report.add(
                "honest devices, \(phase.name)", project: phase.honest.summary,
                baseline: phase.flood == nil ? "—" : "p99 \(Format.duration(baseline)) (median without)",
                ratio: phase.flood == nil ? "—" : String(format: "p99 ×%.2f", phase.honest.p99 / baseline))
            if let flood = phase.flood {
                report.add("… the flood (target \(String(format: "%.0f", target)) requests/s)", project: describe(flood))
            }
            report.add("… CPU during the phase (cores busy)", project: phase.cpu.summary)
        }
        for kind in Kind.allCases {
            let p99s = phases.filter { $0.kind == kind }.map { Format.duration($0.honest.p99) }
            report.add(
                "honest p99, \(kind.rawValue): median of \(p99s.count) rounds", project: Format.duration(result.medianP99(kind)) + " (\(p99s.joined(separator: ", ")))",
                baseline: kind == .withoutFlood ? "—" : Format.duration(baseline),
                ratio: kind == .withoutFlood ? "—" : String(format: "×%.2f", result.medianP99(kind) / baseline))
        }
        report.add(
            "target: honest p99 with the flood ≤ 2× without (medians over the rounds), nothing honest refused",
            project: result.targetMet
                ? String(format: "met (worst p99 ×%.2f, 0 refused)", result.worstRatio)
                : String(format: "NOT met (worst p99 ×%.2f, %d refused)", result.worstRatio, result.honestRefused))
        report.note(
            "Load: every honest device runs the real client from 127.0.0.1 (one cycle every \(Format.duration(Timing.seconds(options.cycle))): "
                + "wrapped key, change-feed page, a \(options.recordBytes)-byte record written; every \(options.refreshEvery)th cycle its token "
                + "renewed first, challenge and token sent with the live token); p50/p99 over operations (a renewal is one operation of two requests). The flood "
                + "(registrations, challenges for its own devices, signed answers minting tokens) comes from other loopback addresses over "
                + "raw keep-alive HTTP/1.1 connections, plain HTTP as the whole bench; flood and devices run on the same machine as the service. "
                + "\(options.rounds) rounds of the three phases alternate; each kind is judged by its median p99, so that a stall of the "
                + "machine (every operation slow at the same instant, with or without a flood: see the slowest operations logged per phase) "
                + "weighs on one round, not on the verdict.")
        return result
    }

    static func describe(_ flood: Flood.Counts) -> String {
        var text = "\(String(format: "%.0f", flood.rate)) requests/s sent (\(flood.sent)): \(flood.succeeded) served, "
            + "\(flood.rateLimited) × 429, \(flood.shed) × 503 shed, \(flood.otherRefusals) other refusals, \(flood.failures) unanswered"
        if let failure = flood.firstFailure { text += " (first: \(failure))" }
        return text
    }

    /// Every device runs its cycle for `seconds`. - Returns: their operations.
    static func honestPhase(_ devices: [Device], options: Options, seconds: Double) async throws -> Honest {
        let start = ContinuousClock.now
        let collected = Locked(Honest(started: start))
        let retriedBefore = GrantServiceClient.retriesAfterShedding.load(ordering: .relaxed)
        let end = start + .milliseconds(Int(seconds * 1000))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for device in devices {
                group.addTask { try await cycle(device, options: options, until: end, into: collected) }
            }
            try await group.waitForAll()
        }
        var honest = collected.current
        honest.elapsed = Timing.seconds(ContinuousClock.now - start)
        honest.retriedAfterShedding = GrantServiceClient.retriesAfterShedding.load(ordering: .relaxed) - retriedBefore
        return honest
    }

    private static func cycle(_ device: Device, options: Options, until end: ContinuousClock.Instant, into collected: Locked<Honest>) async throws {
        let client = device.session.client
        var cursor: Int64 = 0
        var count = Int.random(in: 0..<options.refreshEvery)
        let plaintext = RecordSeeder.plaintext(byteCount: options.recordBytes)
        // Devices start spread over one cycle, then keep their own schedule (no catching up).
        var next = ContinuousClock.now + options.cycle * Double.random(in: 0..<1)
        while true {
            try await Task.sleep(until: next)
            guard ContinuousClock.now < end else { return }
            next = max(next + options.cycle, ContinuousClock.now)
            if count % options.refreshEvery == 0 {
                await operation("renewal", requests: 2, renewal: true, into: collected) { try await client.renewToken() }
            }
            count += 1
            let current = client
            await operation("key", requests: 1, into: collected) { _ = try await current.wrappedKey(device.familyMemberID) }
            let since = cursor
            await operation("changes", requests: 1, into: collected) {
                cursor = try await current.changes(device.familyMemberID, since: since, limit: 50).nextCursor
            }
            await operation("record", requests: 1, into: collected) {
                let recordID = UUID()
                _ = try await current.putRecord(
                    device.familyMemberID, recordID, try RecordCipher.seal(plaintext, recordID: recordID, version: 1, fmk: device.fmk))
            }
        }
    }

    /// Times one operation; a refusal (any error: 429, 503, another status, no answer) is counted by its reason.
    private static func operation(
        _ name: String, requests: Int, renewal: Bool = false, into collected: Locked<Honest>, _ body: () async throws -> Void
    ) async {
        let start = ContinuousClock.now
        var refusal: String?
        do {
            try await body()
        } catch let error as GrantServiceError {
            refusal = "\(error.status) \(error.code)"
        } catch {
            refusal = "\(type(of: error))"
        }
        let elapsed = Timing.seconds(ContinuousClock.now - start)
        collected.withLock { honest in
            honest.requests += requests
            honest.latencies.append(elapsed)
            honest.slowest.append((name, Timing.seconds(start - honest.started), elapsed))
            if honest.slowest.count > 16 {
                honest.slowest.sort { $0.seconds > $1.seconds }
                honest.slowest.removeLast(honest.slowest.count - 8)
            }
            if renewal { honest.renewals.append(elapsed) }
            if let refusal {
                honest.refused += 1
                honest.refusals[refusal, default: 0] += 1
            }
        }
    }
}

/// Where the CPU went during a phase: the grant service's process, this process (honest
/// devices and flood together), and the whole machine (`/proc/stat`, every process of every
/// user: this machine is shared). In cores (1.0: one core busy the whole phase).
struct CPUUsage: Sendable {
    var grant = 0.0
    var bench = 0.0
    var machineBusy = 0.0
    var cores = 0

    struct Sample {
        let at = ContinuousClock.now
        let grantSeconds: Double
        let benchSeconds: Double
        /// Busy and total jiffies of every CPU.
        let machine: (busy: Double, total: Double)
    }

    static func sample(grantPID: Int32) -> Sample {
        Sample(grantSeconds: processSeconds(grantPID) ?? 0, benchSeconds: ProcessCounters.now().cpuSeconds, machine: machineJiffies())
    }

    static func between(_ start: Sample, _ end: Sample) -> CPUUsage {
        let wall = Timing.seconds(end.at - start.at)
        let total = end.machine.total - start.machine.total
        let cores = ProcessInfo.processInfo.activeProcessorCount
        return CPUUsage(
            grant: (end.grantSeconds - start.grantSeconds) / wall, bench: (end.benchSeconds - start.benchSeconds) / wall,
            machineBusy: total > 0 ? (end.machine.busy - start.machine.busy) / total * Double(cores) : .nan, cores: cores)
    }

    var summary: String {
        String(format: "grant service %.2f, bench process %.2f, machine %.2f of %d cores", grant, bench, machineBusy, cores)
    }

    /// utime + stime of a process (fields 14 and 15 of `/proc/<pid>/stat`), in seconds.
    private static func processSeconds(_ pid: Int32) -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let end = text.lastIndex(of: ")") else {
            return nil
        }
        let fields = text[text.index(after: end)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// The first line of `/proc/stat`: busy (everything but idle and iowait) and total jiffies.
    private static func machineJiffies() -> (busy: Double, total: Double) {
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8), let line = text.split(separator: "\n").first else {
            return (0, 0)
        }
        let values = line.split(separator: " ").dropFirst().compactMap { Double($0) }
        guard values.count >= 5 else { return (0, 0) }
        let total = values.prefix(8).reduce(0, +)
        return (total - values[3] - values[4], total)
    }
}
