import AsyncHTTPClient
import Foundation
import NIOCore
import RescindConfiguration
import RescindObservability
import Synchronization
import Tracing

/// Sends ended spans to an OpenTelemetry collector over OTLP/HTTP (JSON), in the background and
/// bounded: spans wait in a queue of `capacity`, go out in batches of `batchSize` at least every
/// `interval`, each POST with a deadline of `requestTimeout`. The sender sleeps until a span is
/// queued, then sends `interval` later, at once when a batch is full or a flush is asked for:
/// an idle process is not woken by its exporter. A full queue drops the span, and a
/// batch the collector did not take is dropped too (counted, never retried): no request, commit
/// or ack ever waits on a collector that is down or slow. The counts are also the process's
/// metrics, `rescind_trace_spans_exported_total` and `rescind_trace_spans_dropped_total`, in
/// whatever backend it bootstrapped (the services' `/metrics`, the agent's metrics file).
public final class OTLPExporter: SpanSink {
    public struct Settings: Sendable {
        /// The collector's base URL (`http://collector:4318`); spans go to `<endpoint>/v1/traces`.
        public var endpoint: URL
        /// `service.name` of every span this process exports.
        public var serviceName: String
        /// `service.instance.id`: random per process (hex, so that no id of ours is mistaken for
        /// it), telling apart the processes of one service, such as each device's agent.
        public var instanceID = TraceContext.hex(TraceContext.randomID(count: 8))
        public var capacity = 2048
        public var batchSize = 512
        public var interval: Duration = .seconds(1)
        public var requestTimeout: Duration = .seconds(2)

        public init(endpoint: URL, serviceName: String) {
            self.endpoint = endpoint
            self.serviceName = serviceName
        }
    }

    /// What happened to the spans so far.
    public struct Counts: Sendable, Equatable {
        public var exported = 0
        public var dropped = 0
        public var failedBatches = 0
    }

    private struct State {
        var queue: [FinishedSpan] = []
        var counts = Counts()
        var flushRequested = false
    }

    public let settings: Settings
    private let state = Mutex(State())
    private let client: HTTPClient
    /// Signalled when the queue stops being empty, fills a batch, or a flush is asked for.
    private let queued = WakeSignal()

    /// - Parameter client: one that opens no spans (`.untraced`), or every export would trace itself.
    public init(settings: Settings, client: HTTPClient = .untraced) {
        self.settings = settings
        self.client = client
    }

    public var counts: Counts { state.withLock { $0.counts } }

    public func accept(_ span: FinishedSpan) {
        let outcome = state.withLock { state -> Queued in
            guard state.queue.count < settings.capacity else {
                state.counts.dropped += 1
                return .dropped
            }
            state.queue.append(span)
            return state.queue.count == 1 || state.queue.count == settings.batchSize ? .wakeSender : .queued
        }
        switch outcome {
        case .wakeSender: queued.signal()
        case .queued: break
        case .dropped: TracingMetrics.dropped(1)
        }
    }

    private enum Queued { case wakeSender, queued, dropped }

    public func flushSoon() {
        state.withLock { $0.flushRequested = true }
        queued.signal()
    }

    private var isDue: Bool { state.withLock { $0.flushRequested || $0.queue.count >= settings.batchSize } }
    private var isEmpty: Bool { state.withLock { $0.queue.isEmpty } }

    /// Sends batches until the task is cancelled, then what is left, once, within the request
    /// timeout.
    public func run() async {
        let clock = ContinuousClock()
        do {
            while true {
                // Idle: asleep until the first span is queued (the timeout only re-checks).
                while isEmpty { try await queued.wait(upTo: .seconds(3600)) }
                // A span is queued: it goes out `interval` from now, sooner when a batch fills.
                let deadline = clock.now + settings.interval
                while !isDue, clock.now < deadline { try await queued.wait(upTo: clock.now.duration(to: deadline)) }
                await sendQueued()
            }
        } catch {
            // Cancelled: the last spans go out below.
        }
        // Not a child of the cancelled task, so that its requests are not cancelled at once.
        await Task { await sendQueued() }.value
    }

    /// Sends every queued span now, in batches, each POST once: `run`'s work, and a short-lived
    /// process's last act (the CLI's, after its command).
    public func sendQueued() async {
        while true {
            let batch = state.withLock { state -> [FinishedSpan] in
                state.flushRequested = false
                let batch = Array(state.queue.prefix(settings.batchSize))
                state.queue.removeFirst(batch.count)
                return batch
            }
            guard !batch.isEmpty else { return }
            let delivered = await post(batch)
            state.withLock { state in
                if delivered {
                    state.counts.exported += batch.count
                } else {
                    state.counts.dropped += batch.count
                    state.counts.failedBatches += 1
                }
            }
            if delivered { TracingMetrics.exported(batch.count) } else { TracingMetrics.dropped(batch.count) }
        }
    }

    private func post(_ batch: [FinishedSpan]) async -> Bool {
        do {
            var request = HTTPClientRequest(url: settings.endpoint.appendingPathComponent("v1/traces").absoluteString)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: try OTLPJSON.request(batch, serviceName: settings.serviceName, instanceID: settings.instanceID)))
            let response = try await client.execute(request, timeout: TimeAmount(settings.requestTimeout))
            _ = try? await response.body.collect(upTo: 64 * 1024)
            return (200..<300).contains(response.status.code)
        } catch {
            return false
        }
    }
}

extension OTLPExporter {
    /// Tracing for this process when `RESCIND_OTEL_EXPORTER_OTLP_ENDPOINT` names an OTLP/HTTP
    /// collector (`http(s)://host:port`): bootstraps the process's tracer (`InstrumentationSystem`,
    /// once per process) and returns the exporter to run or flush. Unset: no tracer (every span a
    /// no-op) and `nil`.
    /// - Throws: `ConfigurationError` for a value that is not an http or https URL with a host.
    public static func bootstrap(serviceName: String, environment: [String: String]) throws -> OTLPExporter? {
        var reader = EnvironmentReader(environment)
        guard let text = reader.optionalString("RESCIND_OTEL_EXPORTER_OTLP_ENDPOINT") else { return nil }
        guard let endpoint = URL(string: text), ["http", "https"].contains(endpoint.scheme?.lowercased()), endpoint.host != nil else {
            throw ConfigurationError(
                variable: "RESCIND_OTEL_EXPORTER_OTLP_ENDPOINT", problem: "must be the http(s) URL of an OTLP/HTTP collector")
        }
        let exporter = OTLPExporter(settings: Settings(endpoint: endpoint, serviceName: serviceName))
        InstrumentationSystem.bootstrap(RescindTracer(sink: exporter))
        return exporter
    }
}
