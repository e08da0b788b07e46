import Tracing

/// W3C Trace Context on any carrier with string headers (HTTP fields, Kafka message headers):
/// `traceparent`, and `tracestate` passed on untouched. Extracting a malformed `traceparent`
/// leaves the context without a trace: the work then starts a trace of its own.
public struct W3CPropagation: Instrument {
    public static let traceparent = "traceparent"
    public static let tracestate = "tracestate"

    public init() {}

    public func extract<Carrier, Extract: Extractor>(
        _ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract
    ) where Extract.Carrier == Carrier {
        guard let header = extractor.extract(key: Self.traceparent, from: carrier),
            let remote = TraceContext(traceparent: header, tracestate: extractor.extract(key: Self.tracestate, from: carrier))
        else { return }
        context.traceContext = remote
    }

    public func inject<Carrier, Inject: Injector>(_ context: ServiceContext, into carrier: inout Carrier, using injector: Inject)
    where Inject.Carrier == Carrier {
        guard let current = context.traceContext else { return }
        injector.inject(current.traceparent, forKey: Self.traceparent, into: &carrier)
        if let state = current.traceState { injector.inject(state, forKey: Self.tracestate, into: &carrier) }
    }
}
