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
}
