/// A `Duration` in the units the code around it speaks: fractional seconds for `TimeInterval`
/// APIs, rates and figures; whole seconds for SQL intervals and settings; milliseconds for
/// logs, acks, librdkafka and libpq. The one place a duration's components are read.
extension Duration {
    /// The duration in seconds, with its fraction.
    public var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// Whole seconds, rounded toward zero.
    public var wholeSeconds: Int { Int(components.seconds) }

    /// Whole milliseconds, rounded toward zero.
    public var wholeMilliseconds: Int {
        Int(components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000)
    }

    /// Whole nanoseconds, rounded toward zero (NIO's `TimeAmount`).
    public var wholeNanoseconds: Int64 {
        components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
    }

    /// Milliseconds rounded up: a deadline made of it is never shorter than the duration.
    public var roundedUpMilliseconds: Int64 {
        components.seconds * 1000 + (components.attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
    }

    /// Whole milliseconds clamped to `0...Int32.max`, the range librdkafka takes for timeouts.
    public var clampedMilliseconds: Int32 {
        Int32(max(0, min(wholeMilliseconds, Int(Int32.max))))
    }
}
