import Foundation
import RescindDevKit
import Testing

/// The dev kit's one launcher: every test that runs a process relies on these three promises,
/// and a broken one shows up as a suite that hangs instead of failing.
@Suite("ChildProcess") struct ChildProcessTests {
    static let shell = URL(fileURLWithPath: "/bin/sh")

    @Test("a run to completion returns the exit status and both streams")
    func runReturnsStatusAndOutput() async throws {
        let result = try await ChildProcess.run(
            Self.shell, ["-c", "echo out; echo err >&2; exit 3"], timeout: .seconds(30), separateOutput: true)
        #expect(result.status == 3 && !result.timedOut)
        #expect(result.stdout == "out\n" && result.stderr == "err\n")
    }

    @Test("a child that outlives its timeout is killed and reported as timed out")
    func timeoutKills() async throws {
        let started = ContinuousClock.now
        let result = try await ChildProcess.run(URL(fileURLWithPath: "/bin/sleep"), ["60"], timeout: .milliseconds(300))
        #expect(result.timedOut)
        #expect(result.status != 0)
        #expect(ContinuousClock.now - started < .seconds(20))
    }

    @Test("a child is over when it exits, even while something it started still runs")
    func exitSeenWhileAGrandchildLives() async throws {
        let started = ContinuousClock.now
        // The shell starts `sleep` in the background, which inherits everything, and exits.
        let result = try await ChildProcess.run(Self.shell, ["-c", "sleep 30 & echo started; exit 4"], timeout: .seconds(20))
        #expect(result.status == 4 && !result.timedOut && result.stdout == "started\n")
        #expect(ContinuousClock.now - started < .seconds(10))
    }

    @Test("a timeout kills what the child started too")
    func timeoutKillsTheGroup() async throws {
        let started = ContinuousClock.now
        let result = try await ChildProcess.run(Self.shell, ["-c", "sleep 30; echo done"], timeout: .milliseconds(300))
        #expect(result.timedOut && !result.stdout.contains("done"))
        #expect(ContinuousClock.now - started < .seconds(10))
    }

    @Test("cancelling the task that waits kills the child, so a test's time limit ends a hung child")
    func cancellationKills() async throws {
        let started = ContinuousClock.now
        let run = Task { try await ChildProcess.run(URL(fileURLWithPath: "/bin/sleep"), ["60"]) }
        try await Task.sleep(for: .milliseconds(300))
        run.cancel()
        let result = try await run.value
        #expect(result.status != 0)
        #expect(ContinuousClock.now - started < .seconds(20))
    }
}
