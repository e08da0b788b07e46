import Foundation
import Testing
import Tracing

@testable import RescindTracing

/// The OTLP JSON the exporter writes by hand, read back by Foundation's parser: every kind of
/// attribute, an event, a link, an error status, and strings a hand-written writer gets wrong
/// (quotes, backslashes, control characters, NUL, non-ASCII) all arrive as they were.
@Suite struct OTLPJSONTests {
    static let awkward = "a \"quoted\" \\ back\nslash\t\u{0}\u{1F} é 漢字 🙂"

    static func span() -> FinishedSpan {
        var attributes = SpanAttributes()
        attributes["text"] = awkward
        attributes["int"] = Int64(-9_007_199_254_740_993)
        attributes["small"] = Int32(7)
        attributes["double"] = 0.25
        attributes["nan"] = Double.nan
        attributes["infinite"] = -Double.infinity
        attributes["flag"] = true
        attributes["list"] = ["x", awkward]
        attributes["numbers"] = [Int64(1), 2]
        var eventAttributes = SpanAttributes()
        eventAttributes["count"] = Int64(3)
        return FinishedSpan(
            traceID: Array(repeating: 0xAB, count: 16), spanID: Array(repeating: 0x01, count: 8), parentSpanID: Array(repeating: 0x02, count: 8),
            name: awkward, kind: .producer, startNanoseconds: 1_700_000_000_000_000_001, endNanoseconds: 1_700_000_000_000_000_999,
            attributes: attributes, events: [SpanEvent(name: "retry", at: DefaultTracerClock.Timestamp(nanosecondsSinceEpoch: 5), attributes: eventAttributes)],
            links: [TraceContext(traceID: Array(repeating: 0xCD, count: 16), spanID: Array(repeating: 0x03, count: 8))],
            status: SpanStatus(code: .error, message: awkward))
    }

    static func value(_ attributes: [[String: Any]], _ key: String) -> [String: Any]? {
        attributes.first { $0["key"] as? String == key }?["value"] as? [String: Any]
    }

    @Test func everyFieldReadsBackAsItWasWritten() throws {
        let data = try OTLPJSON.request([Self.span(), Self.span()], serviceName: "rescind-test", instanceID: "00ff")
        let request = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let resource = try #require((request["resourceSpans"] as? [[String: Any]])?.first)
        let resourceAttributes = try #require((resource["resource"] as? [String: Any])?["attributes"] as? [[String: Any]])
        #expect(Self.value(resourceAttributes, "service.name")?["stringValue"] as? String == "rescind-test")
        #expect(Self.value(resourceAttributes, "service.instance.id")?["stringValue"] as? String == "00ff")
        let scope = try #require((resource["scopeSpans"] as? [[String: Any]])?.first)
        #expect((scope["scope"] as? [String: Any])?["name"] as? String == "rescind")
        let spans = try #require(scope["spans"] as? [[String: Any]])
        #expect(spans.count == 2)
        let span = try #require(spans.first)
        #expect(span["traceId"] as? String == String(repeating: "ab", count: 16))
        #expect(span["spanId"] as? String == "0101010101010101")
        #expect(span["parentSpanId"] as? String == "0202020202020202")
        #expect(span["name"] as? String == Self.awkward)
        #expect(span["kind"] as? Int == 4)
        #expect(span["startTimeUnixNano"] as? String == "1700000000000000001")
        #expect(span["endTimeUnixNano"] as? String == "1700000000000000999")
        let attributes = try #require(span["attributes"] as? [[String: Any]])
        #expect(attributes.compactMap { $0["key"] as? String } == attributes.compactMap { $0["key"] as? String }.sorted())
        #expect(Self.value(attributes, "text")?["stringValue"] as? String == Self.awkward)
        #expect(Self.value(attributes, "int")?["intValue"] as? String == "-9007199254740993")
        #expect(Self.value(attributes, "small")?["intValue"] as? String == "7")
        #expect(Self.value(attributes, "double")?["doubleValue"] as? Double == 0.25)
        #expect(Self.value(attributes, "nan")?["doubleValue"] as? String == "NaN")
        #expect(Self.value(attributes, "infinite")?["doubleValue"] as? String == "-Infinity")
        #expect(Self.value(attributes, "flag")?["boolValue"] as? Bool == true)
        let list = (Self.value(attributes, "list")?["arrayValue"] as? [String: Any])?["values"] as? [[String: Any]]
        #expect(list?.compactMap { $0["stringValue"] as? String } == ["x", Self.awkward])
        let numbers = (Self.value(attributes, "numbers")?["arrayValue"] as? [String: Any])?["values"] as? [[String: Any]]
        #expect(numbers?.compactMap { $0["intValue"] as? String } == ["1", "2"])
        let event = try #require((span["events"] as? [[String: Any]])?.first)
        #expect(event["name"] as? String == "retry" && event["timeUnixNano"] as? String == "5")
        #expect(Self.value(event["attributes"] as? [[String: Any]] ?? [], "count")?["intValue"] as? String == "3")
        let link = try #require((span["links"] as? [[String: Any]])?.first)
        #expect(link["traceId"] as? String == String(repeating: "cd", count: 16) && link["spanId"] as? String == "0303030303030303")
        let status = try #require(span["status"] as? [String: Any])
        #expect(status["code"] as? Int == 2 && status["message"] as? String == Self.awkward)
    }

    @Test func aRootSpanHasNoParentAndAnUnsetStatus() throws {
        var span = Self.span()
        span.parentSpanID = nil
        span.status = nil
        span.events = []
        span.links = []
        let data = try OTLPJSON.request([span], serviceName: "s", instanceID: "i")
        let request = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let scope = ((request["resourceSpans"] as? [[String: Any]])?.first?["scopeSpans"] as? [[String: Any]])?.first
        let parsed = try #require((scope?["spans"] as? [[String: Any]])?.first)
        #expect(parsed["parentSpanId"] == nil)
        #expect((parsed["status"] as? [String: Any])?["code"] as? Int == 0)
        #expect((parsed["events"] as? [Any])?.isEmpty == true && (parsed["links"] as? [Any])?.isEmpty == true)
    }
}
