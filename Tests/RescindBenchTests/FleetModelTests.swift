import Foundation
import Testing

@testable import RescindBench

/// The fleet model of `rescind-bench --sections fleet`: the arithmetic on a
/// fleet small enough to work out by hand, and the simulation's seed and load behaviour.
@Suite struct FleetModelTests {
    /// 86,400 revocations a day (1/s), peak ×2; 2 users × 1 device; 10 records of 100 B.
    static var tiny: FleetInputs {
        var inputs = FleetInputs()
        inputs.revocationsPerDay = 86_400
        inputs.peakHourFactor = 2
        inputs.usersPerFamilyMember = 2
        inputs.devicesPerUser = 1
        inputs.recordsPerRevocation = 10
        inputs.recordBytes = 100
        inputs.commandBytes = 100
        inputs.ackBytes = 50
        inputs.eventBytes = 200
        inputs.notificationBytes = 300
        inputs.partitionTargetPerSecond = 1
        inputs.devicesPerAssignedPartition = 3
        inputs.relayEventsPerSecond = 10
        inputs.relayUtilizationCap = 0.5
        inputs.apiSecondsPerRecord = 0.001
        inputs.onlineProbability = 0.5
        inputs.fetchWaitSeconds = 0.5
        inputs.checkInIntervalSeconds = 100
        inputs.averageRowBytes = 250
        inputs.kafkaReplication = 2
        inputs.kafkaRetentionDays = 1
        inputs.simulatedRevocations = 200
        return inputs
    }

    @Test func theArithmeticOfATinyFleetMatchesTheHandCount() throws {
        let result = FleetModel.evaluate(devices: 10, inputs: Self.tiny)
        let commands = try #require(result.topics.first { $0.name == "device_commands" })
        // 1 revocation/s on average, 2/s at the peak, 2 commands each, 100 B each.
        #expect(commands.averagePerSecond == 2 && commands.peakPerSecond == 4 && commands.peakBytesPerSecond == 400)
        let events = try #require(result.topics.first { $0.name == "revocation_events" })
        #expect(events.peakPerSecond == 2 && events.peakBytesPerSecond == 400)
        // 4 commands/s at 1/s per partition: 4; 10 devices, 3 per assigned partition: 4.
        #expect(result.partitionsForRate == 4 && result.partitionsForAssignedReading == 4)
        // 2/s × (1 event + 2 commands) = 6 events/s; a replica counts for 10 × 0.5 = 5/s: 2 replicas at 0.3.
        #expect(result.relayReplicas == 2 && abs(result.relayUtilization - 0.3) < 1e-12)
        // Grant 1 + 2 × 10 (bodies, staged rows) + 2 × 10 (records, garbage queue) + 11 (staged rows
        // and staging deleted) + 2 × 10 (janitor) + 2 + 1 + 1 + 1 + 1 + 3 × 3 + 2 + 2 = 91, audit
        // 1 + 2 + 4 + 2 + 2 = 11.
        #expect(result.postgresRowsPerRevocation == 102 && result.postgresRowsPerSecondPeak == 204)
        // 2/s × (10 × 100 B of record bodies, each written once + 6 messages × 250 B).
        #expect(result.postgresBytesWrittenPerSecondPeak == 5_000)
        #expect(abs(result.postgresBusySecondsPerSecondPeak - 0.02) < 1e-12)
        // 86,400 revocations × ((5 + 3 × 2) rows × 250 B + 2 kept command envelopes × 100 B).
        #expect(result.postgresRetainedBytesPerDay == 254_880_000)
        // 86,400 × (200 + 2 × (100 + 50) + 300) B × 1 day × 2 copies.
        #expect(result.kafkaStoredBytes == 138_240_000)
        // Today every online device (5) receives every command (4/s) and long-polls twice a second;
        // at check-in the 10 devices make 10 / 100 s requests while idle.
        let today = result.consumption[0]
        #expect(today.deliveriesPerSecond == 20 && today.idleRequestsPerSecond == 10 && today.connections == 5)
        let checkIn = try #require(result.consumption.last)
        #expect(checkIn.deliveriesPerSecond == 4 && abs(checkIn.idleRequestsPerSecond - 0.1) < 1e-12)
    }

    /// Nothing waits and every device is online: each revocation takes exactly the sum of its parts.
    @Test func withoutQueuesOrOfflineDevicesTheLatencyIsTheSumOfTheParts() {
        var inputs = Self.tiny
        inputs.onlineProbability = 1
        inputs.jitter = 0
        inputs.relayEventsPerSecond = 1e12
        inputs.partitionTargetPerSecond = 1e12
        inputs.commitSecondsPerRecord = 0.001
        inputs.deliverySeconds = 0.03
        inputs.pushSeconds = 0.1
        inputs.agentSecondsPerRecord = 0.002
        inputs.ackSeconds = 0.017
        let result = FleetSimulation.run(inputs, partitions: 4, devices: 1_000_000_000)
        let expected = 10 * 0.001 + 0.03 + 0.1 + 10 * 0.002 + 0.017
        #expect(result.allOnlineCount == inputs.simulatedRevocations)
        for value in [result.allOnlineP50, result.allOnlineP99, result.pipelineP99, result.everyDeviceP99] {
            #expect(abs(value - expected) < 1e-6, "\(value) ≠ \(expected)")
        }
    }

    @Test func theSimulationIsReproducibleFromItsSeed() {
        var inputs = Self.tiny
        inputs.checkInMeanSeconds = 60
        let first = FleetSimulation.run(inputs, partitions: 4, devices: 10)
        #expect(FleetSimulation.run(inputs, partitions: 4, devices: 10) == first)
        inputs.seed += 1
        #expect(FleetSimulation.run(inputs, partitions: 4, devices: 10) != first)
        // Offline devices catch up at check-in: the last ack of every device comes after the online ones'.
        #expect(first.everyDeviceP99 >= first.pipelineP99 && first.allOnlineCount < first.revocations)
    }

    /// The same draws with the arrivals compressed: the relay's queue (the first) and every
    /// revocation's commit → last ack only grow. (A partition's own wait need not: a saturated
    /// relay spaces out what reaches it.)
    @Test func theSimulatedLatencyGrowsWithTheLoad() {
        var inputs = Self.tiny
        inputs.onlineProbability = 1
        inputs.relayEventsPerSecond = 50
        inputs.partitionTargetPerSecond = 20
        inputs.simulatedRevocations = 2_000
        let loads = [1.0, 2, 4, 8, 16]
        let results = loads.map { FleetSimulation.run(inputs, partitions: 4, devices: 10, loadFactor: $0) }
        for (lighter, heavier) in zip(results, results.dropFirst()) {
            #expect(heavier.pipelineP50 >= lighter.pipelineP50 && heavier.pipelineP99 >= lighter.pipelineP99)
            #expect(heavier.maxRelayWait >= lighter.maxRelayWait)
        }
        #expect(results.last!.pipelineP99 > 2 * results.first!.pipelineP99)
    }
}

/// `rescind-bench --sections fleet`'s options: every input by name, bad values refused.
@Suite struct FleetOptionsTests {
    @Test func fleetOptionsSetTheirInputsAndRefuseNonsense() throws {
        let options = try BenchOptions(arguments: [
            "--sections", "fleet", "--json", "--fleet-devices", "10,20", "--fleet-records", "42",
            "--fleet-online-probability", "0.9", "--fleet-seed", "7",
        ])
        #expect(options.sections == [.fleet] && options.json && options.fleetDevices == [10, 20])
        #expect(options.fleet.recordsPerRevocation == 42 && options.fleet.onlineProbability == 0.9 && options.fleet.seed == 7)
        #expect(options.fleetExplicit == ["records", "online-probability", "seed"])
        #expect(!BenchOptions.Section.fleet.needsStack && !BenchOptions.Section.crypto.needsStack && BenchOptions.Section.fanout.needsStack)
        #expect(throws: BenchError.self) { try BenchOptions(arguments: ["--fleet-no-such-input", "1"]) }
        #expect(throws: BenchError.self) { try BenchOptions(arguments: ["--fleet-records", "-3"]) }
        #expect(throws: BenchError.self) { try BenchOptions(arguments: ["--fleet-seed", "x"]) }
        #expect(throws: BenchError.self) { try BenchOptions(arguments: ["--fleet-partition-target-per-second", "0"]) }
        #expect(try BenchOptions(arguments: ["--fleet-push-seconds", "0"]).fleet.pushSeconds == 0)
        // Every input has its option, and `--json` lists each one under its name.
        #expect(Set(FleetOptions.values(of: FleetInputs()).keys).count == FleetOptions.inputs.count + 3)
    }

    /// The tracing section turns tracing on in the bench's process for good: asked for by name
    /// only, and on stacks of its own.
    @Test func theTracingSectionIsAskedForByNameAndStartsItsOwnStacks() throws {
        #expect(try BenchOptions(arguments: ["--sections", "tracing"]).sections == [.tracing])
        #expect(!BenchOptions.Section.defaults.contains(.tracing) && !BenchOptions.Section.tracing.needsStack)
    }
}

/// The envelope sizes the fleet section measures by encoding real signed messages.
@Suite struct FleetMessageSizeTests {
    @Test func envelopesAreMeasuredAndTheEventGrowsWithItsDevices() throws {
        let six = try FleetBench.measureSizes(devicesPerRevocation: 6)
        let twelve = try FleetBench.measureSizes(devicesPerRevocation: 12)
        let command = try #require(six["command-bytes"])
        // The outbox section's rows are signed commands of 470 B.
        #expect((400...600).contains(command), "\(command)")
        #expect(six["ack-bytes"]! > 0 && six["ack-bytes"] == twelve["ack-bytes"])
        #expect(twelve["event-bytes"]! > six["event-bytes"]! && twelve["notification-bytes"]! > six["notification-bytes"]!)
    }
}
