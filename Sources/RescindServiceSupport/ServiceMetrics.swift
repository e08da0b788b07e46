import Metrics
import Prometheus
import Synchronization

/// The metrics every service exports alike, in the service's own Prometheus registry: whether
/// its database and its brokers answer (`ReachabilityProbe`), and its HTTP requests
/// (`HTTPMetricsMiddleware`).
///
/// `rescind_database_up` and `rescind_broker_up` are 1 while the last probe was answered, 0
/// after one was not (no subsystem: one name across components, as `rescind_build_info`).
/// The HTTP series are Hummingbird's `MetricsMiddleware`'s, under its names and labels, so that a
/// dashboard reads both services alike: `hb_requests{http_route, http_request_method,
/// http_response_status_code}`, the histogram `http_server_request_duration{…}` (seconds),
/// `hb_request_errors{http_route, http_request_method, error_type}` and
/// `http_server_active_requests{http_request_method}`. They go to the registry given, not to
/// the process's swift-metrics backend, so that services sharing a process (the tests) each
/// export only their own requests.
public final class ServiceMetrics: Sendable {
    private let factory: PrometheusMetricsFactory
    /// `rescind_database_up`: whether the last probe of PostgreSQL was answered.
    public let databaseUp: UpGauge
    /// `rescind_broker_up`: whether the last probe of the Kafka brokers was answered.
    public let brokerUp: UpGauge

    /// A 0-or-1 gauge that knows its last value, so that a change can be logged once.
    public final class UpGauge: Sendable {
        private let gauge: Prometheus.Gauge
        /// Taken as up before the first probe: a server down from the start is one change.
        private let last = Mutex(true)

        init(_ gauge: Prometheus.Gauge) { self.gauge = gauge }

        /// - Returns: whether `up` differs from the value before.
        func set(_ up: Bool) -> Bool {
            gauge.set(to: up ? 1 : 0)
            return last.withLock { last in (last != up, last = up).0 }
        }
    }

    public init(registry: PrometheusCollectorRegistry) {
        factory = PrometheusMetricsFactory(registry: registry)
        func gauge(_ metric: String, _ help: String) -> UpGauge {
            UpGauge(registry.makeGauge(descriptor: MetricNameDescriptor(namespace: "rescind", metricName: metric, unitName: "", helpText: help)))
        }
        databaseUp = gauge("database_up", "1 while PostgreSQL answered the last probe, 0 after it did not.")
        brokerUp = gauge("broker_up", "1 while the Kafka brokers answered the last probe, 0 after they did not.")
    }

    /// Requests of `method` being handled now.
    func active(method: String) -> Metrics.Meter {
        Metrics.Meter(label: "http.server.active_requests", dimensions: [("http.request.method", method)], factory: factory)
    }

    /// One request answered with `status` after `nanoseconds`.
    func answered(route: String, method: String, status: Int, nanoseconds: UInt64) {
        let dimensions = [("http.route", route), ("http.request.method", method), ("http.response.status_code", "\(status)")]
        Metrics.Counter(label: "hb.requests", dimensions: dimensions, factory: factory).increment()
        Metrics.Timer(label: "http.server.request.duration", dimensions: dimensions, preferredDisplayUnit: .seconds, factory: factory)
            .recordNanoseconds(nanoseconds)
    }

    /// One request whose handler threw; answered too (`answered`) with the error's status.
    func failed(route: String, method: String, status: Int) {
        Metrics.Counter(
            label: "hb.request.errors",
            dimensions: [("http.route", route), ("http.request.method", method), ("error.type", "\(status)")], factory: factory
        ).increment()
    }
}
