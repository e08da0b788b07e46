/// The one retry pacing: delays that double from `first` up to `maximum`, back to `first` after
/// a success. Every loop that waits before trying again (a consumer's handling, the agent's
/// self-heal, command intake and acks, violation reports) takes its delays from one.
public struct Backoff: Sendable {
    public let first: Duration
    public let maximum: Duration
    private var current: Duration

    /// A `maximum` below `first` is taken as `first` (settings read from the environment may
    /// cross: the delay then stays at `first`).
    public init(first: Duration, maximum: Duration) {
        self.first = first
        self.maximum = max(first, maximum)
        current = first
    }

    /// The delay to wait now; the next call returns twice as much, up to `maximum`.
    public mutating func next() -> Duration {
        defer { current = min(current * 2, maximum) }
        return current
    }

    /// After a success: the next failure waits `first` again.
    public mutating func reset() {
        current = first
    }
}
