import Metrics

/// The exporter's counts as metrics, in whatever swift-metrics backend the process bootstrapped
/// (the services' `/metrics`, the agent's metrics file; none in the CLI). Handles are made when a
/// count moves, so a backend bootstrapped after the exporter still gets them.
enum TracingMetrics {
    /// `rescind_trace_spans_exported_total`: spans a collector took.
    static func exported(_ count: Int) {
        if count > 0 { Counter(label: "rescind_trace_spans_exported_total").increment(by: count) }
    }

    /// `rescind_trace_spans_dropped_total`: spans lost to a full queue or a batch the collector did not take.
    static func dropped(_ count: Int) {
        if count > 0 { Counter(label: "rescind_trace_spans_dropped_total").increment(by: count) }
    }
}
