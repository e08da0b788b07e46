/// Order statistics of measured samples.
enum Statistics {
    static func median(_ samples: [Double]) -> Double {
        percentile(samples, 50)
    }

    /// Nearest-rank percentile (`p` in 0...100); NaN for no samples. With few samples p99 is
    /// the maximum, which is what the tables then say.
    static func percentile(_ samples: [Double], _ p: Double) -> Double {
        guard !samples.isEmpty else { return .nan }
        let sorted = samples.sorted()
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
        return sorted[min(max(rank, 1), sorted.count) - 1]
    }
}
