import Synchronization
import Tracing

/// The tracer of a Rescind process: W3C Trace Context in and out (`W3CPropagation`), every span
/// recorded, and each ended span handed to a `SpanSink` (the OTLP exporter) without waiting on it.
///
/// A span continues the trace of the context it starts in — a span current there, or a remote
/// parent a header named — or starts a new trace with fresh random ids.
public final class RescindTracer: Tracer {
    public typealias Span = RescindSpan

    let sink: any SpanSink
    let propagation = W3CPropagation()
    private let recording: Atomic<Bool>

    public init(sink: any SpanSink, recording: Bool = true) {
        self.sink = sink
        self.recording = Atomic(recording)
    }

    /// While false, every new span records nothing and continues nothing, as with no tracer at
    /// all: what lets the benchmark measure tracing off and on in one process, in turns (a
    /// process's tracer is bootstrapped once).
    public var isRecording: Bool {
        get { recording.load(ordering: .relaxed) }
        set { recording.store(newValue, ordering: .relaxed) }
    }

    public func startSpan<Instant: TracerInstant>(
        _ operationName: String, context: @autoclosure () -> ServiceContext, ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant, function: String, file fileID: String, line: UInt
    ) -> RescindSpan {
        var context = context()
        guard isRecording else { return RescindSpan(notRecordingIn: context, sink: sink) }
        let parent = context.traceContext
        let own = TraceContext(
            traceID: parent?.traceID ?? TraceContext.randomID(count: 16), spanID: TraceContext.randomID(count: 8),
            flags: 1, traceState: parent?.traceState)
        context.traceContext = own
        return RescindSpan(
            operationName: operationName, kind: kind, context: context, parentSpanID: parent?.spanID,
            start: instant().nanosecondsSinceEpoch, sink: sink)
    }

    public func activeSpan(identifiedBy context: ServiceContext) -> RescindSpan? { nil }

    public func forceFlush() { sink.flushSoon() }

    public func extract<Carrier, Extract: Extractor>(
        _ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract
    ) where Extract.Carrier == Carrier {
        propagation.extract(carrier, into: &context, using: extractor)
    }

    public func inject<Carrier, Inject: Injector>(_ context: ServiceContext, into carrier: inout Carrier, using injector: Inject)
    where Inject.Carrier == Carrier {
        propagation.inject(context, into: &carrier, using: injector)
    }
}

/// Where ended spans go. `accept` must return at once, whatever the collector does.
public protocol SpanSink: Sendable {
    func accept(_ span: FinishedSpan)
    func flushSoon()
}

/// A span as it ended: what the exporter encodes.
public struct FinishedSpan: Sendable {
    public var traceID: [UInt8]
    public var spanID: [UInt8]
    public var parentSpanID: [UInt8]?
    public var name: String
    public var kind: SpanKind
    public var startNanoseconds: UInt64
    public var endNanoseconds: UInt64
    public var attributes: SpanAttributes
    public var events: [SpanEvent]
    public var links: [TraceContext]
    public var status: SpanStatus?
}

/// One span in flight; every mutation after `end` is ignored.
public final class RescindSpan: Span {
    public let context: ServiceContext
    private let state: Mutex<FinishedSpan?>
    private let sink: any SpanSink

    init(operationName: String, kind: SpanKind, context: ServiceContext, parentSpanID: [UInt8]?, start: UInt64, sink: any SpanSink) {
        let own = context.traceContext!
        self.context = context
        self.sink = sink
        state = Mutex(
            FinishedSpan(
                traceID: own.traceID, spanID: own.spanID, parentSpanID: parentSpanID, name: operationName, kind: kind,
                startNanoseconds: start, endNanoseconds: start, attributes: [:], events: [], links: [], status: nil))
    }

    /// A span that records nothing: its context is the one it was started in, unchanged.
    init(notRecordingIn context: ServiceContext, sink: any SpanSink) {
        self.context = context
        self.sink = sink
        state = Mutex(nil)
    }

    public var operationName: String {
        get { state.withLock { $0?.name ?? "" } }
        set { state.withLock { $0?.name = newValue } }
    }

    public var attributes: SpanAttributes {
        get { state.withLock { $0?.attributes ?? [:] } }
        set { state.withLock { $0?.attributes = newValue } }
    }

    public var isRecording: Bool { state.withLock { $0 != nil } }

    public func setStatus(_ status: SpanStatus) { state.withLock { $0?.status = status } }

    public func addEvent(_ event: SpanEvent) { state.withLock { $0?.events.append(event) } }

    public func recordError<Instant: TracerInstant>(_ error: Error, attributes: SpanAttributes, at instant: @autoclosure () -> Instant) {
        // The error's type only: its description may carry an id or a value.
        var attributes = attributes
        attributes["exception.type"] = String(describing: type(of: error))
        addEvent(SpanEvent(name: "exception", at: instant(), attributes: attributes))
    }

    public func addLink(_ link: SpanLink) {
        guard let target = link.context.traceContext else { return }
        state.withLock { $0?.links.append(target) }
    }

    public func end<Instant: TracerInstant>(at instant: @autoclosure () -> Instant) {
        let end = instant().nanosecondsSinceEpoch
        guard var finished = state.withLock({ state -> FinishedSpan? in
            defer { state = nil }
            return state
        }) else { return }
        finished.endNanoseconds = max(end, finished.startNanoseconds)
        sink.accept(finished)
    }
}
