import RescindDevKit
import Testing

@testable import RescindBench

/// The tracing section's arithmetic: the change of a percentile over pairs of revocations, and
/// the resampled interval its verdict reads, on pairs small enough to work out by hand.
@Suite struct TracingBenchTests {
    /// Two phases of ten pairs; the traced revocation of each pair `factor` times its untraced one.
    static func pairs(factor: Double) -> [TracingBench.Pair] {
        (0..<20).map { index in
            let unset = 100 + Double(index % 10) * 10
            return (phase: index / 10, unset: unset, set: unset * factor)
        }
    }

    @Test func aTracedRevocationTenPercentSlowerIsTenPercentAtEveryResampling() {
        var generator = SeededGenerator(seed: 1)
        for percentile in [50.0, 99] {
            #expect(abs(TracingBench.change(Self.pairs(factor: 1.1), percentile: percentile) - 0.1) < 1e-9)
            let (low, high) = TracingBench.interval(Self.pairs(factor: 1.1), percentile: percentile, using: &generator)
            #expect(abs(low - 0.1) < 1e-9 && abs(high - 0.1) < 1e-9)
            // Ten percent over the bound: not met, however the pairs are drawn.
            #expect(high > TracingBench.bound)
        }
    }

    /// One slow traced revocation among twenty moves the p99 and not the p50; the resampled
    /// interval shows how much of the p99's change that one pair carries (draws without it).
    @Test func oneSlowPairMovesTheP99AndItsIntervalShowsIt() {
        var pairs = Self.pairs(factor: 1)
        pairs[19].set = 400
        #expect(TracingBench.change(pairs, percentile: 50) == 0)
        #expect(abs(TracingBench.change(pairs, percentile: 99) - (400.0 / 190 - 1)) < 1e-9)
        var generator = SeededGenerator(seed: 1)
        let (low, high) = TracingBench.interval(pairs, percentile: 99, using: &generator)
        #expect(low == 0 && high > 1)
    }

    /// Each draw keeps every phase's count: a phase of one pair (its traced revocation twice as
    /// slow, the slowest of all) is in every draw, so every draw's p99 change is exactly +100 %.
    /// Drawn from all pairs at once, a third of the draws would miss it and change by nothing.
    @Test func theResamplingDrawsEachPhaseFromItsOwnPairs() {
        var pairs: [TracingBench.Pair] = (0..<19).map { (phase: 0, unset: 100 + Double($0), set: 100 + Double($0)) }
        pairs.append((phase: 1, unset: 190, set: 380))
        var generator = SeededGenerator(seed: 3)
        let (low, high) = TracingBench.interval(pairs, percentile: 99, using: &generator)
        #expect(low == 1 && high == 1)
    }
}
