import Foundation
import Logging
import Testing

@testable import RescindBench

/// The load section of `rescind-bench` on a small scale (about 10 s of load): it runs against a
/// live grant service, floods from one and from many loopback addresses, and no honest
/// device's operation is ever refused. The latency target itself is the full run's to judge
/// (docs/reliability.md): a few seconds on a shared machine say nothing reliable about a p99.
@Suite struct LoadBenchTests {
    @Test func honestDevicesAreNeverRefusedBesideAFlood() async throws {
        let options = try BenchOptions(arguments: ["--sections", "load"])
        let stack = try await BenchStack.start(options: options, logger: Logger(label: "rescind.bench.test"))
        let result: LoadBench.Result
        do {
            var load = LoadBench.Options(devices: 4, seconds: 1.5, addresses: 8, connections: 8, rounds: 1)
            load.cycle = .milliseconds(500)
            result = try await LoadBench.run(stack: stack, options: load, report: BenchReport())
            await stack.stop()
        } catch {
            await stack.stop()
            throw error
        }
        #expect(result.phases.map(\.kind) == LoadBench.Kind.allCases)
        #expect(result.phases.allSatisfy { !$0.honest.latencies.isEmpty })
        #expect(result.honestRefused == 0, "honest refusals: \(result.phases.map(\.honest.refusals))")
        #expect(result.flooded.count == 2)
        for phase in result.flooded {
            let flood = try #require(phase.flood)
            #expect(flood.sent > 0)
            #expect(flood.failures == 0, "\(phase.name): \(flood.firstFailure ?? "")")
        }
    }
}
