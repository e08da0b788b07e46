import Foundation
import RescindCrypto
import RescindProtocol

/// 6. Beyond one machine: the fleet model (`FleetModel`) for each fleet
/// size, with the message sizes measured by encoding real signed messages. Needs no stack.
enum FleetBench {
    static func run(options: BenchOptions, report: BenchReport) throws -> (inputs: FleetInputs, results: [FleetResult]) {
        var inputs = options.fleet
        let sizes = try measureSizes(devicesPerRevocation: Int(inputs.commandsPerRevocation.rounded()))
        for (name, keyPath) in [("command-bytes", \FleetInputs.commandBytes), ("ack-bytes", \.ackBytes),
                                ("event-bytes", \.eventBytes), ("notification-bytes", \.notificationBytes)]
        where !options.fleetExplicit.contains(name) {
            inputs[keyPath: keyPath] = sizes[name]!
        }
        report.begin("6. Beyond one machine: fleet model")
        let peak = FleetModel.peakRevocationsPerSecond(inputs)
        report.note(
            "Inputs: \(Format.grouped(inputs.revocationsPerDay)) revocations/day, peak hour ×\(inputs.peakHourFactor) "
                + "(\(String(format: "%.3f", peak)) revocations/s); \(inputs.usersPerFamilyMember) users × \(inputs.devicesPerUser) devices "
                + "= \(inputs.commandsPerRevocation) commands each; \(Format.grouped(inputs.recordsPerRevocation)) records of "
                + "\(Format.grouped(inputs.recordBytes)) B. Measured: relay \(Format.grouped(inputs.relayEventsPerSecond)) events/s per replica, "
                + "commit \(Format.duration(inputs.commitSecondsPerRecord)) and API calls \(Format.duration(inputs.apiSecondsPerRecord)) per record, "
                + "delivery \(Format.duration(inputs.deliverySeconds)), agent \(Format.duration(inputs.agentSecondsPerRecord)) per record, "
                + "ack \(Format.duration(inputs.ackSeconds)); envelopes (encoded now) command \(Int(inputs.commandBytes)) B, "
                + "ack \(Int(inputs.ackBytes)) B, event \(Int(inputs.eventBytes)) B, completion \(Int(inputs.notificationBytes)) B. "
                + "Assumed: partition target \(Format.grouped(inputs.partitionTargetPerSecond))/s, online \(inputs.onlineProbability), "
                + "check-in mean \(long(inputs.checkInMeanSeconds)), periodic check-in \(long(inputs.checkInIntervalSeconds)), "
                + "push \(Format.duration(inputs.pushSeconds)), fetch wait \(Format.duration(inputs.fetchWaitSeconds)), "
                + "\(Int(inputs.averageRowBytes)) B per stored row, Kafka replication \(Int(inputs.kafkaReplication)) and "
                + "retention \(Int(inputs.kafkaRetentionDays)) days. Simulation: \(inputs.simulatedRevocations) revocations, seed \(inputs.seed), each part × (1 − \(inputs.jitter) + Exp(mean \(inputs.jitter))).")
        var results: [FleetResult] = []
        for devices in options.fleetDevices {
            let result = FleetModel.evaluate(devices: devices, inputs: inputs)
            results.append(result)
            add(result, to: report)
        }
        return (inputs, results)
    }

    /// Durations beyond an hour in hours (check-ins), the rest as `Format.duration`.
    private static func long(_ seconds: Double) -> String {
        seconds >= 3600 ? String(format: "%.1f h", seconds / 3600) : Format.duration(seconds)
    }

    private static func add(_ result: FleetResult, to report: BenchReport) {
        let fleet = "\(Format.grouped(Double(result.devices))) devices"
        for topic in result.topics {
            report.add(
                "\(fleet): \(topic.name), messages/s average / peak hour", project: String(
                    format: "%.3f / %.3f", topic.averagePerSecond, topic.peakPerSecond),
                baseline: "\(Format.grouped(topic.peakBytesPerSecond)) B/s at peak")
        }
        report.add(
            "\(fleet): device_commands partitions (peak ÷ target rate; devices per partition if assigned)",
            project: "\(result.partitionsForRate) for rate; \(result.partitionsForAssignedReading) if devices read assigned partitions")
        for consumption in result.consumption {
            report.add(
                "\(fleet): consumption — \(consumption.design)",
                project: "\(Format.grouped(consumption.deliveriesPerSecond)) deliveries/s, \(Format.grouped(consumption.egressBytesPerSecond)) B/s out; idle \(Format.grouped(consumption.idleRequestsPerSecond)) requests/s, \(Format.grouped(consumption.connections)) held connections",
                baseline: consumption.verdict)
        }
        report.add(
            "\(fleet): grant-service replicas for the relay",
            project: "\(result.relayReplicas) (utilization \(String(format: "%.5f", result.relayUtilization)))")
        report.add(
            "\(fleet): PostgreSQL at the peak hour",
            project: "\(Format.grouped(result.postgresRowsPerRevocation)) rows/revocation, \(Format.grouped(result.postgresRowsPerSecondPeak)) rows/s, "
                + "\(Format.grouped(result.postgresBytesWrittenPerSecondPeak)) B/s written, \(String(format: "%.3f", result.postgresBusySecondsPerSecondPeak)) s busy per s")
        report.add(
            "\(fleet): storage growth per day",
            project: "PostgreSQL \(Format.grouped(result.postgresRetainedBytesPerDay)) B/day kept; Kafka \(Format.grouped(result.kafkaStoredBytes)) B held (retention × replication)")
        let simulation = result.simulation
        report.add(
            "\(fleet): simulated commit → last ack p50 / p99, every device online (\(simulation.allOnlineCount) of \(simulation.revocations))",
            project: "\(long(simulation.allOnlineP50)) / \(long(simulation.allOnlineP99))")
        report.add(
            "\(fleet): … last ack of the online devices, every revocation",
            project: "\(long(simulation.pipelineP50)) / \(long(simulation.pipelineP99))")
        report.add(
            "\(fleet): … last ack of every device, offline ones at check-in",
            project: "\(long(simulation.everyDeviceP50)) / \(long(simulation.everyDeviceP99))",
            baseline: "longest wait: relay \(long(simulation.maxRelayWait)), partition \(long(simulation.maxPartitionWait))")
    }

    /// The signed envelopes' sizes, by encoding real messages with a real key (a revocation
    /// event and its completion notice list every expected device).
    static func measureSizes(devicesPerRevocation: Int) throws -> [String: Double] {
        let key = Ed25519.PrivateKey()
        let now = Date()
        let devices = (0..<max(1, devicesPerRevocation)).map { index in
            RevocationEvent.ExpectedDevice(
                deviceID: UUID(), userID: UUID(), action: index == 0 ? .secureDeletion : .fmkRotation,
                signingPublicKey: Data(repeating: 7, count: 32))
        }
        let command = DeviceCommand(
            commandID: UUID(), eventID: UUID(), deviceID: UUID(), action: .fmkRotation, familyMemberID: UUID(),
            newFMKVersion: 2, issuedAt: now)
        let ack = DeviceAck(
            ackID: UUID(), commandID: UUID(), eventID: UUID(), deviceID: UUID(), action: .fmkRotation, outcome: .applied,
            recordsProcessed: 500, fmkVersion: 2, durationMs: 27, error: nil, ackedAt: now)
        let event = RevocationEvent(
            eventID: UUID(), familyMemberID: UUID(), ownerUserID: UUID(), ownerAgreementPublicKey: Data(repeating: 1, count: 32),
            revokedUserID: UUID(), revokedByUserID: UUID(), newFMKVersion: 2, recordsReencrypted: 500, reason: nil,
            clientDurationMs: 1000, occurredAt: now, expectedDevices: devices)
        let notification = AuditNotification(
            notificationID: UUID(), kind: .revocationCompleted, familyMemberID: UUID(), eventID: UUID(), deviceID: nil,
            commitToLastAckMs: 100,
            devices: devices.map { .init(deviceID: $0.deviceID, userID: $0.userID, action: $0.action, state: "applied", ackedAt: now, late: false) },
            occurredAt: now)
        func size<Payload: Codable & Sendable>(_ payload: Payload, _ schema: String, _ signer: String) throws -> Double {
            Double(try SignedMessage(schema: schema, signer: signer, payload: payload, key: key).encoded().count)
        }
        return [
            "command-bytes": try size(command, DeviceCommand.schema, "grant-service"),
            "ack-bytes": try size(ack, DeviceAck.schema, "device"),
            "event-bytes": try size(event, RevocationEvent.schema, "grant-service"),
            "notification-bytes": try size(notification, AuditNotification.schema, AuditNotification.signer),
        ]
    }

    /// `--json`: every fleet size's inputs and outputs, for scripts.
    static func json(_ results: [FleetResult], inputs: FleetInputs) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        struct Document: Encodable {
            var inputs: [String: Double]
            var fleets: [FleetResult]
        }
        return String(decoding: try encoder.encode(Document(inputs: FleetOptions.values(of: inputs), fleets: results)), as: UTF8.self)
    }
}
