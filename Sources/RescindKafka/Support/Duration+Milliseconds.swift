extension Duration {
    /// Whole milliseconds, rounded down and clamped to `0...Int32.max`, the range
    /// librdkafka accepts for timeouts.
    var clampedMilliseconds: Int32 {
        let (seconds, attoseconds) = components
        let milliseconds = Double(seconds) * 1_000 + Double(attoseconds) / 1e15
        return Int32(max(0, min(milliseconds, Double(Int32.max))))
    }

    /// The value of a librdkafka `*.ms` configuration property.
    var configurationMilliseconds: String { String(clampedMilliseconds) }
}
