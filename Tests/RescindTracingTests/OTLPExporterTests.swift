import Foundation
import RescindTestSupport
import Synchronization
import Testing
import Tracing

@testable import RescindTracing

/// The tracer and the exporter against a collector on loopback: the test kit's OTLP/HTTP
/// receiver, keeping what it is sent or holding every request, or none listening at all.
@Suite struct OTLPExporterTests {
    static func exporter(_ endpoint: URL, _ adjust: (inout OTLPExporter.Settings) -> Void = { _ in }) -> OTLPExporter {
        var settings = OTLPExporter.Settings(endpoint: endpoint, serviceName: "rescind-test")
        settings.interval = .milliseconds(200)
        adjust(&settings)
        return OTLPExporter(settings: settings)
    }

    static func eventually(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while !condition() {
            guard ContinuousClock.now < deadline else { return }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// A trace continued from a remote parent (a `traceparent` header), two spans deep: both
    /// arrive with the remote trace id, each naming its parent, in OTLP's JSON encoding.
    @Test(.timeLimit(.minutes(1)))
    func spansReachTheCollectorInOneTraceWithTheirParents() async throws {
        let receiver = try await OTLPReceiver.start()
        do {
            let exporter = Self.exporter(receiver.endpoint)
            let tracer = RescindTracer(sink: exporter)
            let running = Task { await exporter.run() }
            var remote = ServiceContext.topLevel
            W3CPropagation().extract(["traceparent": TraceContextTests.example], into: &remote, using: DictionaryExtractor())

            var injected: [String: String] = [:]
            try await tracer.withSpan("revoke", context: remote, ofKind: .client) { revoke in
                revoke.attributes["rescind.records"] = 500
                try await tracer.withSpan("commit") { commit in
                    commit.setStatus(SpanStatus(code: .ok))
                    tracer.inject(ServiceContext.current ?? .topLevel, into: &injected, using: DictionaryInjector())
                    try await Task.sleep(for: .milliseconds(2))
                }
            }
            tracer.forceFlush()
            try await Self.eventually { receiver.spans.count == 2 }
            running.cancel()
            await running.value

            let spans = Dictionary(uniqueKeysWithValues: receiver.spans.map { ($0["name"] as? String ?? "", $0) })
            let revoke = try #require(spans["revoke"])
            let commit = try #require(spans["commit"])
            #expect(revoke["traceId"] as? String == "4bf92f3577b34da6a3ce929d0e0e4736")
            #expect(commit["traceId"] as? String == "4bf92f3577b34da6a3ce929d0e0e4736")
            #expect(revoke["parentSpanId"] as? String == "00f067aa0ba902b7")
            #expect(commit["parentSpanId"] as? String == revoke["spanId"] as? String)
            #expect((commit["spanId"] as? String)?.count == 16 && commit["spanId"] as? String != revoke["spanId"] as? String)
            // What the commit span would send on: its own position in the same trace.
            #expect(injected["traceparent"] == "00-4bf92f3577b34da6a3ce929d0e0e4736-\(commit["spanId"] as? String ?? "")-01")
            #expect(revoke["kind"] as? Int == 3 && commit["kind"] as? Int == 1)
            #expect((commit["status"] as? [String: Any])?["code"] as? Int == 1)
            let start = UInt64(commit["startTimeUnixNano"] as? String ?? "") ?? 0
            let end = UInt64(commit["endTimeUnixNano"] as? String ?? "") ?? 0
            #expect(start > 1_700_000_000_000_000_000 && end >= start + 2_000_000)
            let attribute = (revoke["attributes"] as? [[String: Any]])?.first
            #expect(attribute?["key"] as? String == "rescind.records")
            #expect((attribute?["value"] as? [String: Any])?["intValue"] as? String == "500")
            #expect(exporter.counts == OTLPExporter.Counts(exported: 2, dropped: 0, failedBatches: 0))
        } catch {
            await receiver.stop()
            throw error
        }
        await receiver.stop()
    }

    /// Nothing listening: ending a span never waits; past the queue's capacity spans are dropped
    /// at once, and a batch the collector could not take is dropped and counted.
    @Test(.timeLimit(.minutes(1)))
    func aCollectorThatIsDownDelaysNothingAndCountsTheDrops() async throws {
        let exporter = Self.exporter(URL(string: "http://127.0.0.1:9")!) { $0.capacity = 10 }
        let tracer = RescindTracer(sink: exporter)
        let clock = ContinuousClock()
        let elapsed = clock.measure {
            for index in 0..<1000 { tracer.withSpan("step \(index)") { _ in } }
        }
        #expect(elapsed < .seconds(1), "ending 1,000 spans took \(elapsed)")
        #expect(exporter.counts.dropped == 990)
        let running = Task { await exporter.run() }
        try await Self.eventually { exporter.counts.failedBatches == 1 }
        running.cancel()
        await running.value
        #expect(exporter.counts == OTLPExporter.Counts(exported: 0, dropped: 1000, failedBatches: 1))
    }

    /// A collector that holds every request: the batch is given up at the request deadline, and
    /// spans ended meanwhile are not held up.
    @Test(.timeLimit(.minutes(1)))
    func aSlowCollectorCostsABatchNotAWait() async throws {
        let receiver = try await OTLPReceiver.start(holdFor: .seconds(2))
        do {
            let exporter = Self.exporter(receiver.endpoint) { $0.requestTimeout = .milliseconds(300) }
            let tracer = RescindTracer(sink: exporter)
            tracer.withSpan("first") { _ in }
            let running = Task { await exporter.run() }
            try await Self.eventually { exporter.counts.failedBatches == 1 }
            let elapsed = ContinuousClock().measure { tracer.withSpan("second") { _ in } }
            #expect(elapsed < .milliseconds(100))
            running.cancel()
            await running.value
            #expect(exporter.counts.failedBatches >= 1 && exporter.counts.exported == 0)
        } catch {
            await receiver.stop()
            throw error
        }
        await receiver.stop()
    }

    /// Switched off, the tracer hands nothing to its sink and sends no context on, as with no
    /// tracer at all; switched on again, it records.
    @Test func aTracerThatIsNotRecordingEndsAndSendsNothing() {
        let sink = CollectingSink()
        let tracer = RescindTracer(sink: sink, recording: false)
        var headers: [String: String] = [:]
        tracer.withSpan("off") { span in
            #expect(!span.isRecording)
            tracer.inject(span.context, into: &headers, using: DictionaryInjector())
        }
        #expect(sink.names.isEmpty && headers.isEmpty)
        tracer.isRecording = true
        tracer.withSpan("on") { _ in }
        #expect(sink.names == ["on"])
    }
}

/// A sink that keeps the names of the spans it is handed.
final class CollectingSink: SpanSink {
    private let spans = Mutex<[String]>([])
    var names: [String] { spans.withLock { $0 } }
    func accept(_ span: FinishedSpan) { spans.withLock { $0.append(span.name) } }
    func flushSoon() {}
}
