import Testing
import Tracing

@testable import RescindTracing

/// `traceparent` as W3C Trace Context (Level 1, §3.2) defines it, on the recommendation's own
/// example and on each rule it states.
@Suite struct TraceContextTests {
    /// §3.2.2's example: version 00, sampled.
    static let example = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

    @Test func theRecommendationsExampleParsesAndFormatsBackToItself() throws {
        let context = try #require(TraceContext(traceparent: Self.example, tracestate: "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"))
        #expect(context.traceIDHex == "4bf92f3577b34da6a3ce929d0e0e4736")
        #expect(context.spanIDHex == "00f067aa0ba902b7")
        #expect(context.flags == 1 && context.isSampled)
        #expect(context.traceState == "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE")
        #expect(context.traceparent == Self.example)
        #expect(TraceContext(traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")?.isSampled == false)
    }

    /// A later version is read for the four fields it shares with 00 (§3.2.4, "versioning of traceparent").
    @Test func aLaterVersionIsReadAsVersionZero() throws {
        let future = try #require(TraceContext(traceparent: "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-the-future-will-be-like"))
        #expect(future.traceparent == Self.example)
    }

    @Test(arguments: [
        "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",  // version ff is invalid
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",  // all-zero trace id
        "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",  // all-zero parent id
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",  // upper-case hex
        "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",  // a trace id one digit short
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b-01",  // a parent id one digit short
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",  // version 00 with more fields
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g",  // flags not hex
        "00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01",  // wrong separators
        "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01.",  // a later version, not followed by "-"
        "", "00", "garbage",
    ])
    func aHeaderThatBreaksARuleIsNone(header: String) {
        #expect(TraceContext(traceparent: header) == nil)
    }

    @Test func propagationInjectsWhatItExtracts() throws {
        var context = ServiceContext.topLevel
        W3CPropagation().extract(["traceparent": Self.example, "tracestate": "rojo=1"], into: &context, using: DictionaryExtractor())
        #expect(context.traceContext?.traceparent == Self.example)
        var headers: [String: String] = [:]
        W3CPropagation().inject(context, into: &headers, using: DictionaryInjector())
        #expect(headers == ["traceparent": Self.example, "tracestate": "rojo=1"])

        var refused = ServiceContext.topLevel
        W3CPropagation().extract(["traceparent": "00-" + String(repeating: "0", count: 32) + "-00f067aa0ba902b7-01"], into: &refused, using: DictionaryExtractor())
        #expect(refused.traceContext == nil)
        var none: [String: String] = [:]
        W3CPropagation().inject(refused, into: &none, using: DictionaryInjector())
        #expect(none.isEmpty)
    }

    /// A caller's `tracestate` is stored and sent on only within W3C's bounds; beyond them it is
    /// dropped, and the trace still continues.
    @Test func aTraceStateBeyondTheBoundsIsDroppedNotRefused() throws {
        let state = String(repeating: "a", count: 512)
        #expect(TraceContext(traceparent: Self.example, tracestate: state)?.storableTraceState == state)
        for hostile in [String(repeating: "a", count: 513), "rojo=1\r\nx=2", "rojo=\u{7f}", "rojo=é"] {
            let context = try #require(TraceContext(traceparent: Self.example, tracestate: hostile))
            #expect(context.storableTraceState == nil && context.traceparent == Self.example, "\(hostile.debugDescription)")
        }
    }

    @Test func aContinuingContextIsTopLevelWithTheTrace() throws {
        let trace = try #require(TraceContext(traceparent: Self.example))
        #expect(ServiceContext.continuing(trace)?.traceContext == trace)
        #expect(ServiceContext.continuing(nil) == nil)
    }
}

struct DictionaryExtractor: Extractor {
    func extract(key: String, from carrier: [String: String]) -> String? { carrier[key] }
}

struct DictionaryInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout [String: String]) { carrier[key] = value }
}
