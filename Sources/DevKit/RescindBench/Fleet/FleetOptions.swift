import Foundation

/// `rescind-bench --sections fleet` options: `--fleet-devices 100000,1000000` and one
/// `--fleet-<input> VALUE` per model input (`FleetInputs`), each named here once.
enum FleetOptions {
    /// Option name (after `--fleet-`) → the input it sets, in the order `--help` lists them.
    static var inputs: [(name: String, keyPath: WritableKeyPath<FleetInputs, Double>)] {
        [
        ("revocations-per-day", \.revocationsPerDay),
        ("peak-hour-factor", \.peakHourFactor),
        ("users-per-family-member", \.usersPerFamilyMember),
        ("devices-per-user", \.devicesPerUser),
        ("records", \.recordsPerRevocation),
        ("record-bytes", \.recordBytes),
        ("relay-events-per-second", \.relayEventsPerSecond),
        ("commit-seconds-per-record", \.commitSecondsPerRecord),
        ("api-seconds-per-record", \.apiSecondsPerRecord),
        ("delivery-seconds", \.deliverySeconds),
        ("agent-seconds-per-record", \.agentSecondsPerRecord),
        ("ack-seconds", \.ackSeconds),
        ("command-bytes", \.commandBytes),
        ("ack-bytes", \.ackBytes),
        ("event-bytes", \.eventBytes),
        ("notification-bytes", \.notificationBytes),
        ("partition-target-per-second", \.partitionTargetPerSecond),
        ("devices-per-assigned-partition", \.devicesPerAssignedPartition),
        ("relay-utilization-cap", \.relayUtilizationCap),
        ("online-probability", \.onlineProbability),
        ("check-in-mean-seconds", \.checkInMeanSeconds),
        ("check-in-interval-seconds", \.checkInIntervalSeconds),
        ("push-seconds", \.pushSeconds),
        ("fetch-wait-seconds", \.fetchWaitSeconds),
        ("row-bytes", \.averageRowBytes),
        ("kafka-replication", \.kafkaReplication),
        ("kafka-retention-days", \.kafkaRetentionDays),
        ("jitter", \.jitter),
        ]
    }

    /// Inputs the model divides by (or draws a rate from): they must be positive.
    static let divisors: Set<String> = [
        "revocations-per-day", "peak-hour-factor", "relay-events-per-second", "partition-target-per-second",
        "devices-per-assigned-partition", "relay-utilization-cap", "fetch-wait-seconds", "check-in-interval-seconds",
    ]

    static var usage: String {
        "fleet (no stack needed): [--fleet-devices 100000,1000000] [--fleet-revocations N] [--fleet-seed N] [--fleet-relay-replicas N] [--json]\n"
            + "    " + inputs.map { "[--fleet-\($0.name) X]" }.joined(separator: " ")
    }

    /// Sets `inputs` from `--fleet-<name> value`; returns false when `name` is no fleet input.
    static func apply(name: String, value: String, to inputs: inout FleetInputs) throws -> Bool {
        switch name {
        case "revocations":
            guard let count = Int(value), count > 0 else { throw BenchError("--fleet-revocations needs a positive integer") }
            inputs.simulatedRevocations = count
        case "seed":
            guard let seed = UInt64(value) else { throw BenchError("--fleet-seed needs an unsigned integer") }
            inputs.seed = seed
        case "relay-replicas":
            guard let count = Int(value), count > 0 else { throw BenchError("--fleet-relay-replicas needs a positive integer") }
            inputs.relayReplicas = count
        default:
            guard let entry = Self.inputs.first(where: { $0.name == name }) else { return false }
            let positive = divisors.contains(name)
            guard let number = Double(value), number.isFinite, positive ? number > 0 : number >= 0 else {
                throw BenchError("--fleet-\(name) needs a number \(positive ? "> 0" : "≥ 0")")
            }
            inputs[keyPath: entry.keyPath] = number
        }
        return true
    }

    /// Every input by its option name (`--json`).
    static func values(of inputs: FleetInputs) -> [String: Double] {
        var values = Dictionary(uniqueKeysWithValues: Self.inputs.map { ($0.name, inputs[keyPath: $0.keyPath]) })
        values["revocations"] = Double(inputs.simulatedRevocations)
        values["seed"] = Double(inputs.seed)
        values["relay-replicas"] = Double(inputs.relayReplicas)
        return values
    }
}
