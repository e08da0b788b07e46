import Prometheus
import RescindObservability
import RescindServiceSupport

/// The grant service's metrics: every metric it exports is named and documented here and
/// created once, in `init`; the rest of the module records through these properties (the
/// architecture tests forbid making metric handles anywhere else).
///
/// They live in `MetricsRegistry.shared`, the registry behind the process's swift-metrics
/// backend, so that `/metrics` shows them next to anything a library records through swift-metrics.
final class GrantMetrics: Sendable {
    let registry: PrometheusCollectorRegistry

    /// `rescind_revocations_committed_total`: revocations committed.
    let revocationsCommitted: Counter
    /// `rescind_records_reencrypted_total`: records swapped in by committed revocations.
    let recordsReencrypted: Counter
    /// `rescind_outbox_published_total`: outbox rows the broker acknowledged.
    let outboxPublished: Counter
    /// `rescind_outbox_lag_seconds`: after each drain, the age of the oldest unsent outbox row (0 when none).
    let outboxLag: Gauge
    /// `rescind_device_sync_state_failures_total`: key fetches and change-feed pages answered whose
    /// device check-in (`device_sync_state`) could not be recorded.
    let deviceSyncStateFailures: Counter
    /// `rescind_requests_rate_limited_total{limit}`: requests answered 429 `rate_limited`, per
    /// budget (`RateLimitedOperation.limitName`, and `registrations` for the budget of every address together).
    let rateLimited: [String: Counter]
    /// `rescind_requests_shed_total`: requests answered 503 `overloaded` at once because
    /// `RESCIND_GRANT_MAX_IN_FLIGHT` were being handled, or, for a request without credentials,
    /// `RESCIND_GRANT_MAX_ANONYMOUS_IN_FLIGHT` of those.
    let requestsShed: Counter
    /// `rescind_requests_in_flight`: requests being handled now (the load-shedding bound counts these).
    let requestsInFlight: Gauge
    /// `rescind_challenges_replaced_total`: open authentication challenges deleted because their
    /// device had `RESCIND_GRANT_OPEN_CHALLENGES_PER_DEVICE` open when another was asked for.
    let challengesReplaced: Counter
    /// `rescind_build_info{version}`: always 1, labelled with `RescindVersion.current`, so that a
    /// query or an alert can tell which build each instance runs.
    let buildInfo: Gauge
    /// What every service exports alike: `rescind_database_up`, `rescind_broker_up` and the HTTP
    /// request series (`HTTPMetricsMiddleware`).
    let service: ServiceMetrics

    /// - Parameter registry: the default bootstraps swift-metrics with it (once per process).
    init(registry: PrometheusCollectorRegistry = MetricsRegistry.shared) {
        func name(_ metric: String, _ unit: String, _ help: String) -> MetricNameDescriptor {
            MetricNameDescriptor(namespace: "rescind", metricName: metric, unitName: unit, helpText: help)
        }
        self.registry = registry
        service = ServiceMetrics(registry: registry)
        revocationsCommitted = registry.makeCounter(descriptor: name("revocations_committed", "total", "Revocations committed."))
        recordsReencrypted = registry.makeCounter(
            descriptor: name("records_reencrypted", "total", "Records swapped in by committed revocations."))
        outboxPublished = registry.makeCounter(
            descriptor: name("outbox_published", "total", "Outbox rows the broker acknowledged."))
        outboxLag = registry.makeGauge(
            descriptor: name("outbox_lag", "seconds", "Age of the oldest unsent outbox row after the last drain."))
        deviceSyncStateFailures = registry.makeCounter(
            descriptor: name(
                "device_sync_state_failures", "total",
                "Key fetches and change-feed pages answered whose device check-in could not be recorded."))
        rateLimited = Dictionary(
            uniqueKeysWithValues: RateLimits.limitNames.map { limit in
                (
                    limit,
                    registry.makeCounter(
                        descriptor: name("requests_rate_limited", "total", "Requests answered 429 rate_limited, per budget."),
                        labels: [("limit", limit)])
                )
            })
        requestsShed = registry.makeCounter(
            descriptor: name("requests_shed", "total", "Requests answered 503 overloaded because the in-flight bound was reached."))
        requestsInFlight = registry.makeGauge(descriptor: name("requests_in_flight", "", "Requests being handled now."))
        challengesReplaced = registry.makeCounter(
            descriptor: name(
                "challenges_replaced", "total",
                "Open authentication challenges deleted because their device had the most open when another was asked for."))
        buildInfo = registry.makeGauge(
            descriptor: name("build_info", "", "Always 1, labelled with the build's version."),
            labels: [("version", RescindVersion.current)])
        buildInfo.set(to: 1)
    }
}
