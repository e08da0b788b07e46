import Foundation
import RescindObservability
import Testing

/// The "there is work" flag between tasks (the agent's inbox → executor and outbox → ack
/// publisher, spans queued → the OTLP exporter) wakes its waiter when signalled instead of being polled: a
/// waiter suspended for a minute returns as soon as the signal comes, a signal given before the
/// wait is not lost, the timeout still ends a wait, and cancellation ends it at once.
@Suite("Wake signal")
struct WakeSignalTests {
    @Test("a signal wakes a waiter suspended with a long timeout at once; one given before the wait is kept for it")
    func signalWakes() async throws {
        let signal = WakeSignal()
        let started = ContinuousClock.now
        async let waited: Void = signal.wait(upTo: .seconds(60))
        try await Task.sleep(for: .milliseconds(100))
        signal.signal()
        try await waited
        #expect(started.duration(to: .now) < .seconds(30), "woken by the signal, not by the 60 s timeout")

        signal.signal()
        let before = ContinuousClock.now
        try await signal.wait(upTo: .seconds(60))
        #expect(before.duration(to: .now) < .seconds(30), "the signal given before the wait is consumed by it")

        // Consumed: the next wait runs to its timeout.
        let timed = ContinuousClock.now
        try await signal.wait(upTo: .milliseconds(200))
        #expect(timed.duration(to: .now) >= .milliseconds(200))
    }

    @Test("many waits and signals from concurrent tasks: every wait ends, none hangs")
    func concurrentUse() async throws {
        let signal = WakeSignal()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for _ in 0..<200 { try await signal.wait(upTo: .milliseconds(20)) }
            }
            group.addTask {
                for _ in 0..<200 {
                    signal.signal()
                    await Task.yield()
                }
            }
            try await group.waitForAll()
        }
    }

    @Test("cancelling the waiting task ends the wait at once with CancellationError")
    func cancellation() async throws {
        let signal = WakeSignal()
        let started = ContinuousClock.now
        let waiter = Task { try await signal.wait(upTo: .seconds(60)) }
        try await Task.sleep(for: .milliseconds(100))
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        #expect(started.duration(to: .now) < .seconds(30))
    }
}
