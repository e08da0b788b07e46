import Foundation
import RescindObservability

/// Wall-clock and monotonic helpers. Latencies that cross processes (Kafka timestamps, ack
/// times) use wall-clock `Date`s, which every process on this machine reads from one clock.
enum Timing {
    /// Runs `body` and returns its result with the elapsed time in seconds.
    static func measure<T>(_ body: () throws -> T) rethrows -> (T, Double) {
        let start = ContinuousClock.now
        let result = try body()
        return (result, seconds(ContinuousClock.now - start))
    }

    static func measure<T>(isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> T) async rethrows -> (T, Double) {
        let start = ContinuousClock.now
        let result = try await body()
        return (result, seconds(ContinuousClock.now - start))
    }

    static func seconds(_ duration: Duration) -> Double { duration.seconds }

    /// Polls `condition` every `interval` until it holds or `timeout` passes, or the task is
    /// cancelled (a cancelled `Task.sleep` returns at once: polling on would spin).
    /// - Returns: whether it held.
    static func wait(
        timeout: Duration, interval: Duration = .milliseconds(5), _ condition: () async throws -> Bool
    ) async rethrows -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline, !Task.isCancelled {
            if try await condition() { return true }
            try? await Task.sleep(for: interval)
        }
        return try await condition()
    }
}
