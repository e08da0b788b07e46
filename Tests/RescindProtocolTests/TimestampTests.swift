import Foundation
import Testing

@testable import RescindProtocol

@Suite struct TimestampTests {
    @Test func formatsUTCWithMilliseconds() {
        let date = Date(timeIntervalSince1970: 1_737_385_200.123_9)
        #expect(Timestamp.format(date) == "2025-01-20T15:00:00.123Z")
    }

    @Test func parsedTimestampsReformatIdentically() throws {
        for text in ["2025-01-20T15:00:00.123Z", "1999-12-31T23:59:59.999Z", "2026-11-23T01:00:00.001Z"] {
            let date = try #require(Timestamp.parse(text))
            #expect(Timestamp.format(date) == text)
        }
    }

    @Test func acceptsTimestampsWithoutFraction() throws {
        let date = try #require(Timestamp.parse("2025-01-20T15:00:00Z"))
        #expect(Timestamp.format(date) == "2025-01-20T15:00:00.000Z")
    }

    @Test func rejectsGarbage() {
        #expect(Timestamp.parse("yesterday") == nil)
        #expect(Timestamp.parse("") == nil)
    }

    @Test func datesBeforeTheEpochTruncateTowardsThePast() throws {
        let date = Date(timeIntervalSince1970: -0.0015)
        #expect(Timestamp.format(date) == "1969-12-31T23:59:59.998Z")
    }

    /// Seconds the arithmetic paths must get right: the epoch, leap days (2000 is a leap year,
    /// 2100 is not), year ends, the last representable millisecond, and a spread in between.
    static func edgeSeconds(below end: Int64 = Timestamp.lastSecond) -> [Int64] {
        var seconds: [Int64] = [0, 59, 86_399, 86_400, 951_782_399, 951_782_400, 951_868_800, 978_307_199, 4_107_542_399,
            4_107_542_400, 4_102_444_800, 253_402_300_799]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20_000 { seconds.append(Int64.random(in: 0..<end, using: &generator)) }
        return seconds.filter { $0 < end }
    }

    @Test func arithmeticFormatMatchesTheCalendar() {
        var generator = SystemRandomNumberGenerator()
        for second in Self.edgeSeconds() {
            let date = Date(timeIntervalSince1970: Double(second * 1000 + Int64.random(in: 0..<1000, using: &generator)) / 1000)
            // The milliseconds as `format` reads them (far from 1970 a `Double` may lose one).
            let milliseconds = Int64(Timestamp.millisecondsSinceEpoch(date))
            let expected = Timestamp.calendarFormat(seconds: milliseconds / 1000, fraction: milliseconds % 1000)
            #expect(Timestamp.format(date) == expected, "second \(second)")
        }
    }

    /// Up to 2200: beyond, Foundation's `Double` seconds lose a millisecond now and then, the
    /// arithmetic does not (the first check below holds over the whole range).
    @Test func canonicalParseMatchesFoundation() throws {
        var generator = SystemRandomNumberGenerator()
        for second in Self.edgeSeconds() {
            let fraction = Int64.random(in: 0..<1000, using: &generator)
            let text = Timestamp.calendarFormat(seconds: second, fraction: fraction)
            #expect(Timestamp.canonicalMilliseconds(text) == second * 1000 + fraction, "\(text)")
        }
        for second in Self.edgeSeconds(below: 7_258_118_400) {
            let fraction = Int64.random(in: 0..<1000, using: &generator)
            let text = Timestamp.calendarFormat(seconds: second, fraction: fraction)
            #expect(Timestamp.parse(text) == Timestamp.foundationParse(text), "\(text)")
        }
    }

    /// Anything not exactly canonical goes to Foundation's parser, so the fast path never
    /// widens what is accepted.
    @Test func nonCanonicalTextsTakeFoundationsPath() {
        for text in [
            "2025-02-29T00:00:00.000Z", "2100-02-29T00:00:00.000Z", "2025-13-01T00:00:00.000Z", "2025-00-10T00:00:00.000Z",
            "2025-01-00T00:00:00.000Z", "2025-04-31T00:00:00.000Z", "2025-01-01T24:00:00.000Z", "2025-01-01T23:60:00.000Z",
            "2025-01-01T23:59:60.000Z", "1969-12-31T23:59:59.999Z", "2025-01-01t00:00:00.000Z", "2025-01-01T00:00:00.000z",
            "2025-01-01T00:00:00.000+00:00", "2025-01-01T00:00:00.0000Z", "2025-01-01T00:00:00Z", "+025-01-01T00:00:00.000Z",
            "2025-01-01T00:00:0a.000Z", "2025-01-01T00:00:00.00\u{0}Z", "٢٠٢٥-01-01T00:00:00.000Z",
        ] {
            #expect(Timestamp.canonicalMilliseconds(text) == nil, "\(text)")
            #expect(Timestamp.parse(text) == Timestamp.foundationParse(text), "\(text)")
        }
    }
}
