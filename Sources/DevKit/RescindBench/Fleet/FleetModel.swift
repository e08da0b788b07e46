import Foundation

/// Sizing the fleet: a fleet far beyond this machine, on paper (arithmetic) and by a seeded
/// discrete-event simulation. Pure: no I/O, no clock, so the tests check it by hand.
/// Every input's default and where it comes from is in `FleetInputs` and docs/benchmarks.md,
/// "Beyond one machine".
struct FleetInputs: Sendable, Equatable {
    // MARK: The fleet (assumed: the figures and the demo's family)
    var revocationsPerDay = 10_000.0
    /// The busiest hour carries this many times the average hour's revocations (assumed).
    var peakHourFactor = 3.0
    /// Users who keep or lose access to a family member: owner + grantees (the demo: 3 adults).
    var usersPerFamilyMember = 3.0
    /// Agent devices per user (the demo: two each).
    var devicesPerUser = 2.0
    /// Records of the family member revoked (commit → last ack's family member).
    var recordsPerRevocation = 500.0
    var recordBytes = 2048.0

    // MARK: Measured here (docs/benchmarks.md, the fleet section's inputs table names each run)
    /// Outbox relay, events/s per grant-service replica (headline, median of three runs, batch 2000).
    var relayEventsPerSecond = 28_700.0
    /// The commit transaction's time per record (10,000 records: commit 435.9 ms).
    var commitSecondsPerRecord = 435.9e-3 / 10_000
    /// PostgreSQL time of a revocation's API calls per record (10,000 records: 12,821 records/s).
    var apiSecondsPerRecord = 1 / 12_821.0
    /// Command published → agent starts, 1 agent (p50, fetch wait 25 ms).
    var deliverySeconds = 0.030
    /// Agent work per record (1 agent: 27 ms for 500 records).
    var agentSecondsPerRecord = 0.027 / 500
    /// Ack written → published (1 agent, p50).
    var ackSeconds = 0.017
    /// Signed envelope sizes, measured by encoding real messages (`FleetBench.measureSizes`);
    /// these defaults are the bench's outbox row ("20,000 × 470 B") and its measured siblings.
    var commandBytes = 470.0
    var ackBytes = 560.0
    var eventBytes = 1_300.0
    var notificationBytes = 900.0

    // MARK: Design choices and assumptions
    /// What one `device_commands` partition should carry at most (the consumer behind it
    /// writes each command to PostgreSQL: 1,000/s leaves it most of its time idle).
    var partitionTargetPerSecond = 1_000.0
    /// Devices that read one partition when agents are assigned partitions by key hash.
    var devicesPerAssignedPartition = 1_000.0
    /// A relay replica is counted at most this busy.
    var relayUtilizationCap = 0.5
    /// Probability that a device is online (holding its channel) when a command is issued.
    var onlineProbability = 0.7
    /// Mean time until an offline device checks in (exponential), seconds.
    var checkInMeanSeconds = 4 * 3600.0
    /// A device checks in at least this often even without a push, seconds (check-in model).
    var checkInIntervalSeconds = 6 * 3600.0
    /// Push notification latency added to the measured delivery hop (check-in model).
    var pushSeconds = 0.3
    /// A long-polling Kafka consumer's `fetch.wait.max.ms` (assigned partitions).
    var fetchWaitSeconds = 0.5
    /// Stored rows retained per revocation and per device, and their size with index and
    /// tuple overhead: counted from the migrations and `RevocationStore.commit` (see rows below).
    var averageRowBytes = 250.0
    var kafkaReplication = 3.0
    var kafkaRetentionDays = 7.0

    // MARK: Simulation
    /// Spread of each simulated part around its measured p50 (0: fixed times). 0.15 makes a lone
    /// device's simulated p99/p50 about the 1-agent run's measured 120 / 101 ms.
    var jitter = 0.15
    var simulatedRevocations = 20_000
    var seed: UInt64 = 19
    var relayReplicas = 1

    var commandsPerRevocation: Double { usersPerFamilyMember * devicesPerUser }
}

/// What the model says for one fleet size.
struct FleetResult: Sendable, Equatable, Codable {
    struct Topic: Sendable, Equatable, Codable {
        var name: String
        var averagePerSecond: Double
        var peakPerSecond: Double
        var peakBytesPerSecond: Double
    }

    struct Consumption: Sendable, Equatable, Codable {
        var design: String
        /// Messages the broker hands to devices per second at the peak hour.
        var deliveriesPerSecond: Double
        var egressBytesPerSecond: Double
        /// Requests per second that devices make while nothing happens.
        var idleRequestsPerSecond: Double
        var connections: Double
        var verdict: String
    }

    var devices: Int
    var topics: [Topic]
    var partitionsForRate: Int
    var partitionsForAssignedReading: Int
    var consumption: [Consumption]
    var relayReplicas: Int
    var relayUtilization: Double
    var postgresRowsPerRevocation: Double
    var postgresRowsPerSecondPeak: Double
    var postgresBytesWrittenPerSecondPeak: Double
    var postgresBusySecondsPerSecondPeak: Double
    var postgresRetainedBytesPerDay: Double
    var kafkaStoredBytes: Double
    var simulation: FleetSimulation.Result
}

enum FleetModel {
    static let secondsPerDay = 86_400.0

    static func averageRevocationsPerSecond(_ inputs: FleetInputs) -> Double { inputs.revocationsPerDay / secondsPerDay }
    static func peakRevocationsPerSecond(_ inputs: FleetInputs) -> Double { averageRevocationsPerSecond(inputs) * inputs.peakHourFactor }

    /// Rows one revocation writes, by table (from `RevocationStore`, `OutboxRelay`, the janitor,
    /// the agents' sync and the audit service's migrations); R records, D devices, G grantees.
    static func rowsPerRevocation(_ inputs: FleetInputs) -> (written: Double, retained: Double) {
        let records = inputs.recordsPerRevocation
        let devices = inputs.commandsPerRevocation
        let users = inputs.usersPerFamilyMember
        // Grant service (write-once, migrations 0014–0015): the staging row; R new bodies (COPY
        // into `record_bodies`) and R narrow staged rows; R narrow records pointed at the new
        // bodies (UPDATE) and R old bodies queued in `record_body_garbage`; R staged rows and the
        // staging row deleted; the janitor's R queue rows and R old bodies deleted; every grant
        // touched (the revoked one ended, the others re-wrapped); the family member; the owner's
        // key statement; the revocation event; the exposure; outbox rows (1 event + D commands)
        // inserted, marked sent and deleted a day later; D `device_commands` rows (kept for
        // check-in); and each rotating agent's download upserting its device_sync_state row.
        let grant =
            1 + 2 * records + 2 * records + (records + 1) + 2 * records + users + 1 + 1 + 1 + 1 + 3 * (1 + devices) + devices + devices
        // Audit service: the revocation row, one expected-device row each, each ack stored and
        // its device row updated, the audit-log entry and its chain head, the completion notice
        // (notification outbox inserted, then marked sent).
        let audit = 1 + devices + 2 * devices + 2 + 2
        // Kept: key statement, revocation event, exposure, the audit revocation row, the log
        // entry, and per device its command, expected-device row and ack (records are rewritten
        // in place: churn, not growth).
        let retained = 5 + 3 * devices
        return (grant + audit, retained)
    }

    static func evaluate(devices: Int, inputs: FleetInputs) -> FleetResult {
        let average = averageRevocationsPerSecond(inputs)
        let peak = peakRevocationsPerSecond(inputs)
        let commands = inputs.commandsPerRevocation
        func topic(_ name: String, perRevocation: Double, bytes: Double) -> FleetResult.Topic {
            FleetResult.Topic(
                name: name, averagePerSecond: average * perRevocation, peakPerSecond: peak * perRevocation,
                peakBytesPerSecond: peak * perRevocation * bytes)
        }
        let topics = [
            topic("revocation_events", perRevocation: 1, bytes: inputs.eventBytes),
            topic("device_commands", perRevocation: commands, bytes: inputs.commandBytes),
            topic("device_acks", perRevocation: commands, bytes: inputs.ackBytes),
            topic("audit_notifications", perRevocation: 1, bytes: inputs.notificationBytes),
        ]
        let commandsPeak = peak * commands
        let partitionsForRate = max(1, Int((commandsPeak / inputs.partitionTargetPerSecond).rounded(.up)))
        let partitionsForAssigned = max(1, Int((Double(devices) / inputs.devicesPerAssignedPartition).rounded(.up)))
        let online = Double(devices) * inputs.onlineProbability
        let consumption = [
            FleetResult.Consumption(
                design: "today: one consumer group per device, every device reads the whole topic",
                deliveriesPerSecond: commandsPeak * online, egressBytesPerSecond: commandsPeak * online * inputs.commandBytes,
                idleRequestsPerSecond: online / inputs.fetchWaitSeconds, connections: online,
                verdict: "no: every command goes to every device; \(Format.grouped(Double(devices))) groups, each committing every offset"),
            FleetResult.Consumption(
                design: "one consumer group of all devices",
                deliveriesPerSecond: commandsPeak, egressBytesPerSecond: commandsPeak * inputs.commandBytes,
                idleRequestsPerSecond: online / inputs.fetchWaitSeconds, connections: online,
                verdict: "no: a group gives partitions to members, not a device its own commands; every join or leave rebalances all"),
            FleetResult.Consumption(
                design: "assigned partitions: hash(device) mod \(partitionsForAssigned), filter by key, offsets kept on the device",
                deliveriesPerSecond: commandsPeak * online / Double(partitionsForAssigned),
                egressBytesPerSecond: commandsPeak * online / Double(partitionsForAssigned) * inputs.commandBytes,
                idleRequestsPerSecond: online / inputs.fetchWaitSeconds, connections: online,
                verdict: "works, but the idle long polls and open connections grow with the fleet"),
            FleetResult.Consumption(
                design: "a topic (partition) per device",
                deliveriesPerSecond: commandsPeak, egressBytesPerSecond: commandsPeak * inputs.commandBytes,
                idleRequestsPerSecond: online / inputs.fetchWaitSeconds, connections: online,
                verdict: "no: \(Format.grouped(Double(devices) * inputs.kafkaReplication)) partition replicas of metadata, and every idle device still long-polls"),
            FleetResult.Consumption(
                design: "check-in: a gateway group reads the topic, devices get a push and fetch over HTTPS",
                deliveriesPerSecond: commandsPeak, egressBytesPerSecond: commandsPeak * inputs.commandBytes,
                idleRequestsPerSecond: Double(devices) / inputs.checkInIntervalSeconds,
                connections: Double(partitionsForRate),
                verdict: "chosen: idle cost is the periodic check-in only; Kafka sees a few consumers"),
        ]
        let relayEvents = peak * (1 + commands)
        let relayReplicas = max(1, Int((relayEvents / (inputs.relayEventsPerSecond * inputs.relayUtilizationCap)).rounded(.up)))
        let rows = rowsPerRevocation(inputs)
        // Each body is written once (write-once bodies); the other record rows are narrow.
        let recordBytesPerRevocation = inputs.recordsPerRevocation * inputs.recordBytes
        let messagesPerRevocation = 1 + commands + commands + 1
        let bytesPerRevocationOnKafka = inputs.eventBytes + commands * (inputs.commandBytes + inputs.ackBytes) + inputs.notificationBytes
        var simulationInputs = inputs
        simulationInputs.relayReplicas = max(inputs.relayReplicas, relayReplicas)
        return FleetResult(
            devices: devices, topics: topics, partitionsForRate: partitionsForRate,
            partitionsForAssignedReading: partitionsForAssigned, consumption: consumption,
            relayReplicas: relayReplicas, relayUtilization: relayEvents / (inputs.relayEventsPerSecond * Double(relayReplicas)),
            postgresRowsPerRevocation: rows.written, postgresRowsPerSecondPeak: rows.written * peak,
            postgresBytesWrittenPerSecondPeak: peak * (recordBytesPerRevocation + messagesPerRevocation * inputs.averageRowBytes),
            postgresBusySecondsPerSecondPeak: peak * inputs.recordsPerRevocation * inputs.apiSecondsPerRecord,
            // Each kept `device_commands` row also holds its signed envelope.
            postgresRetainedBytesPerDay: inputs.revocationsPerDay * (rows.retained * inputs.averageRowBytes + commands * inputs.commandBytes),
            kafkaStoredBytes: inputs.revocationsPerDay * bytesPerRevocationOnKafka * inputs.kafkaRetentionDays * inputs.kafkaReplication,
            simulation: FleetSimulation.run(simulationInputs, partitions: partitionsForRate, devices: devices))
    }
}
