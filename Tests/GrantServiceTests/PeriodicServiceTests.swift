import Logging
import RescindServiceSupport
import Testing

/// The one periodic loop of the services (janitor, deadline monitor): passes repeat every
/// interval, a failed pass does not end the loop, cancellation ends it promptly.
@Suite struct PeriodicServiceTests {
    actor Passes {
        var count = 0
        func next() -> Int {
            count += 1
            return count
        }
    }

    struct TestFailure: Error {}

    @Test(.timeLimit(.minutes(1)))
    func passesRepeatSurviveFailuresAndStopOnCancellation() async throws {
        let passes = Passes()
        let service = PeriodicService(name: "test pass", interval: .milliseconds(10), logger: Logger(label: "test.periodic")) {
            if await passes.next() == 1 { throw TestFailure() }
        }
        let task = Task { try await service.run() }
        while await passes.count < 4 { try await Task.sleep(for: .milliseconds(5)) }
        task.cancel()
        try await task.value
        let stopped = await passes.count
        try await Task.sleep(for: .milliseconds(50))
        #expect(await passes.count == stopped, "a pass ran after the loop ended")
    }
}
