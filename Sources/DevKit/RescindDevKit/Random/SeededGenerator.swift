import Foundation

/// SplitMix64: a small, fast, seedable random number generator, the same on every platform, so
/// that whatever the dev kit draws (a chaos schedule, a fleet simulation, a hostile sample) is
/// replayed from its seed alone. Not for keys a product uses: those come from `SecureRandom`.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// An independent generator for one lane (faults, operations, arrivals), so that the lanes'
    /// draws do not depend on how their work interleaves.
    public func split(_ lane: UInt64) -> SeededGenerator {
        var copy = SeededGenerator(seed: state ^ (lane &* 0xD1B5_4A32_D192_ED03))
        _ = copy.next()
        return copy
    }

    /// Uniform in [0, 1).
    public mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }

    /// Exponentially distributed with the given mean (inter-arrival times, check-in delays).
    public mutating func exponential(mean: Double) -> Double { -log(1 - unit()) * mean }

    /// `count` random bytes (seeded key material for test identities, never for real keys).
    public mutating func bytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &self) }
    }

    /// A random (version 4) UUID drawn from this generator.
    public mutating func uuid() -> UUID {
        var raw = bytes(16)
        raw[6] = raw[6] & 0x0F | 0x40
        raw[8] = raw[8] & 0x3F | 0x80
        return UUID(uuid: (raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7],
                           raw[8], raw[9], raw[10], raw[11], raw[12], raw[13], raw[14], raw[15]))
    }
}
