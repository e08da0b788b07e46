import Foundation
import RescindTracing
import Testing
import Tracing

@testable import RescindKafka

/// Trace context in Kafka headers, read from whatever anyone wrote to a topic: a header that is
/// null, not UTF-8 or malformed is no context (the message is handled untraced), and a producer
/// never sends two `traceparent` headers.
@Suite struct TraceHeaderTests {
    static let example = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

    static func extracted(_ headers: [KafkaHeader]) -> TraceContext? {
        var context = ServiceContext.topLevel
        W3CPropagation().extract(headers, into: &context, using: KafkaHeadersExtractor())
        return context.traceContext
    }

    @Test func aContextInjectedIsTheContextExtracted() throws {
        var context = ServiceContext.topLevel
        context.traceContext = TraceContext(traceparent: Self.example, tracestate: "rojo=1")
        var headers = [KafkaHeader(key: "schema", value: Data("x".utf8)), KafkaHeader(key: "traceparent", value: Data("stale".utf8))]
        W3CPropagation().inject(context, into: &headers, using: KafkaHeadersInjector())
        #expect(headers.map(\.key) == ["schema", "traceparent", "tracestate"])
        #expect(Self.extracted(headers) == context.traceContext)
    }

    @Test func aHostileHeaderIsNoContext() {
        let hostile: [[KafkaHeader]] = [
            [KafkaHeader(key: "traceparent", value: nil)],
            [KafkaHeader(key: "traceparent", value: Data([0xff, 0xfe, 0x00]))],
            [KafkaHeader(key: "traceparent", value: Data(Self.example.uppercased().utf8))],
            [KafkaHeader(key: "traceparent", value: Data(Self.example.utf8) + Data([0]))],
            [KafkaHeader(key: "Traceparent", value: Data(Self.example.utf8))],
            [],
        ]
        for headers in hostile {
            #expect(Self.extracted(headers) == nil, "\(headers)")
        }
    }

    /// Repeated, the last one counts: a header appended after the producer's cannot make the
    /// message unreadable, only name another parent, which is all a writer to the topic can do.
    @Test func theLastOfRepeatedHeadersCounts() throws {
        let other = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
        let headers = [KafkaHeader(key: "traceparent", value: Data(Self.example.utf8)), KafkaHeader(key: "traceparent", value: Data(other.utf8))]
        #expect(Self.extracted(headers)?.traceparent == other)
    }
}
