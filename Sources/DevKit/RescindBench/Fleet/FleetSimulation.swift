import Foundation
import RescindDevKit

/// A discrete-event simulation of commit → last ack at the peak hour: Poisson arrivals of
/// revocations; the commit transaction (measured time per record); the outbox relay (FIFO,
/// `relayReplicas` servers, each publishing a revocation's 1 + D messages at the measured
/// rate); one FIFO queue per `device_commands` partition (served at the target rate); each
/// device a FIFO server doing the measured work per record, online with a probability, else
/// catching up at its check-in (exponential delay). Each command draws its device uniformly
/// from the fleet, so one device's commands queue behind each other only by chance. Reproducible from the seed: the same seed
/// gives the same draws whatever the load, so a heavier load only compresses the arrivals.
enum FleetSimulation {
    struct Result: Sendable, Equatable, Codable {
        var revocations: Int
        /// commit → last ack when every device of the revocation was online (seconds).
        var allOnlineCount: Int
        var allOnlineP50: Double
        var allOnlineP99: Double
        /// commit → last ack of the online devices, for every revocation: what the pipeline costs.
        var pipelineP50: Double
        var pipelineP99: Double
        /// commit → last ack of every device, offline ones included (their check-in dominates).
        var everyDeviceP50: Double
        var everyDeviceP99: Double
        /// The longest wait seen at the relay and at a partition (seconds).
        var maxRelayWait: Double
        var maxPartitionWait: Double
    }

    /// - Parameter loadFactor: multiplies the peak arrival rate (the monotonicity check).
    static func run(_ inputs: FleetInputs, partitions: Int, devices: Int, loadFactor: Double = 1) -> Result {
        let rate = FleetModel.peakRevocationsPerSecond(inputs) * loadFactor
        let commands = max(1, Int(inputs.commandsPerRevocation.rounded()))
        let records = inputs.recordsPerRevocation
        // Separate streams, so that changing the load changes no other draw.
        var arrivals = SeededGenerator(seed: inputs.seed)
        var fleet = SeededGenerator(seed: inputs.seed ^ 0xD1B5_4A32_D192_ED03)
        var relayFree = [Double](repeating: 0, count: max(1, inputs.relayReplicas))
        var partitionFree = [Double](repeating: 0, count: max(1, partitions))
        var deviceFree: [Int: Double] = [:]
        var allOnline: [Double] = []
        var pipeline: [Double] = []
        var everyDevice: [Double] = []
        var maxRelayWait = 0.0
        var maxPartitionWait = 0.0
        var now = 0.0
        // Each part's time: its measured p50 × (1 − j + an exponential of mean j), mean 1 × p50.
        let jitter = min(max(inputs.jitter, 0), 1)
        func vary(_ seconds: Double) -> Double {
            jitter == 0 ? seconds : seconds * (1 - jitter + fleet.exponential(mean: jitter))
        }
        for _ in 0..<inputs.simulatedRevocations {
            now += arrivals.exponential(mean: 1 / rate)
            let committed = now + vary(records * inputs.commitSecondsPerRecord)
            let replica = relayFree.indices.min { relayFree[$0] < relayFree[$1] }!
            let relayStart = max(committed, relayFree[replica])
            maxRelayWait = max(maxRelayWait, relayStart - committed)
            let published = relayStart + Double(1 + commands) / inputs.relayEventsPerSecond
            relayFree[replica] = published
            var lastOnline = published
            var last = published
            var everyOnline = true
            for _ in 0..<commands {
                let device = Int(fleet.next() % UInt64(max(1, devices)))
                let online = fleet.unit() < inputs.onlineProbability
                let checkIn = fleet.exponential(mean: inputs.checkInMeanSeconds)
                let partition = device % partitionFree.count
                let partitionStart = max(published, partitionFree[partition])
                maxPartitionWait = max(maxPartitionWait, partitionStart - published)
                let taken = partitionStart + 1 / inputs.partitionTargetPerSecond
                partitionFree[partition] = taken
                let reached = taken + vary(inputs.deliverySeconds) + inputs.pushSeconds
                let work = vary(records * inputs.agentSecondsPerRecord)
                let ack = vary(inputs.ackSeconds)
                let done: Double
                if online {
                    let start = max(reached, deviceFree[device] ?? 0)
                    done = start + work
                    deviceFree[device] = done
                } else {
                    // Caught up at its check-in, apart from its online queue (a device offline for
                    // one command is not holding up the commands it gets once back).
                    done = reached + checkIn + work
                }
                let acked = done + ack
                last = max(last, acked)
                if online { lastOnline = max(lastOnline, acked) } else { everyOnline = false }
            }
            pipeline.append(lastOnline - now)
            everyDevice.append(last - now)
            if everyOnline { allOnline.append(last - now) }
        }
        return Result(
            revocations: inputs.simulatedRevocations, allOnlineCount: allOnline.count,
            allOnlineP50: Statistics.percentile(allOnline, 50), allOnlineP99: Statistics.percentile(allOnline, 99),
            pipelineP50: Statistics.percentile(pipeline, 50), pipelineP99: Statistics.percentile(pipeline, 99),
            everyDeviceP50: Statistics.percentile(everyDevice, 50), everyDeviceP99: Statistics.percentile(everyDevice, 99),
            maxRelayWait: maxRelayWait, maxPartitionWait: maxPartitionWait)
    }
}
