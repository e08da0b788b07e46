import Metrics
import Prometheus

/// The process's Prometheus registry. swift-metrics has one global backend per
/// process, so it is bootstrapped once, by whichever service starts first.
public enum MetricsRegistry {
    public static let shared: PrometheusCollectorRegistry = {
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        return registry
    }()
}
