import RescindObservability
import Testing

/// The one retry pacing, and the one reading of a duration's components.
struct BackoffTests {
    @Test func delaysDoubleUpToTheMaximumAndStartAgainAfterASuccess() {
        var backoff = Backoff(first: .milliseconds(100), maximum: .milliseconds(500))
        #expect((1...5).map { _ in backoff.next() } == [.milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(500), .milliseconds(500)])
        backoff.reset()
        #expect(backoff.next() == .milliseconds(100))
    }

    @Test func aMaximumBelowTheFirstDelayKeepsTheFirst() {
        var backoff = Backoff(first: .seconds(10), maximum: .seconds(2))
        #expect([backoff.next(), backoff.next()] == [.seconds(10), .seconds(10)])
    }

    @Test func aDurationInEachUnitTheCodeSpeaks() {
        let duration = Duration.seconds(2) + .milliseconds(345) + .nanoseconds(678)
        #expect(duration.seconds == 2.345000678)
        #expect(duration.wholeSeconds == 2)
        #expect(duration.wholeMilliseconds == 2345)
        #expect(duration.roundedUpMilliseconds == 2346)
        #expect(Duration.milliseconds(7).roundedUpMilliseconds == 7)
        #expect(duration.wholeNanoseconds == 2_345_000_678)
        #expect(duration.clampedMilliseconds == 2345)
        #expect(Duration.seconds(-3).clampedMilliseconds == 0)
        #expect(Duration.seconds(3_000_000).clampedMilliseconds == Int32.max)
    }
}
