import Prometheus
import RescindObservability
import RescindProtocol
import RescindServiceSupport

/// The audit service's Prometheus metrics, in a registry of its own.
///
/// A registry per application instance (not the process-wide swift-metrics backend)
/// lets a test process run a grant service and several audit services side by side,
/// each exporting only its own numbers on `/metrics`.
final class AuditMetrics: Sendable {
    let registry: PrometheusCollectorRegistry

    /// Gauges refreshed from PostgreSQL by the deadline monitor (the same for every replica).
    let pendingAcks: Gauge
    let overdueAcks: Gauge
    let openRevocations: Gauge
    let unverifiedAcks: Gauge
    let unsentNotifications: Gauge
    /// Revocation commit to the ack that completed it.
    let commitToLastAck: DurationHistogram
    let auditEntries: Counter
    let notificationsPublished: Counter
    /// Event streams (`GET /v1/events`) open on this replica, refused at the cap, and
    /// ended because their reader fell a whole buffer behind.
    let openStreams: Gauge
    let streamsRefused: Counter
    let slowStreamEnded: Counter
    let stalledReadersClosed: Counter
    /// Monitoring requests refused for want of a valid credential (401).
    let monitoringUnauthenticated: Counter
    /// Quarantine storage, refreshed by the janitor: rows and body bytes kept.
    let rejectedStoredRows: Gauge
    let rejectedStoredBytes: Gauge
    /// Bytes of the acks held unverified (`pending_acks`), refreshed by the deadline monitor.
    let unverifiedAckBytes: Gauge
    /// Rejections stored without their body: the hourly byte budget of its topic, partition and reason was spent.
    let rejectedBodiesNotStored: Counter
    /// Requests answered 503 `overloaded` at once because `RESCIND_AUDIT_MAX_IN_FLIGHT` were being handled.
    let requestsShed: Counter
    /// Requests being handled now (what the load-shedding bound counts; event streams count only until their head is sent).
    let requestsInFlight: Gauge
    /// `rescind_build_info{version}` (no `audit` subsystem: one name across components): always 1,
    /// labelled with `RescindVersion.current`.
    let buildInfo: Gauge
    /// What every service exports alike: `rescind_database_up`, `rescind_broker_up` and the HTTP
    /// request series (`HTTPMetricsMiddleware`).
    let service: ServiceMetrics

    init() {
        let registry = PrometheusCollectorRegistry()
        self.registry = registry
        service = ServiceMetrics(registry: registry)
        func gauge(_ metric: String, unit: String = "", _ help: String) -> Gauge { Self.gauge(registry, metric, unit: unit, help) }
        func counter(_ metric: String, _ help: String) -> Counter { Self.counter(registry, metric, help) }
        pendingAcks = gauge("pending_acks", "Expected device acks not yet received (pending or overdue).")
        overdueAcks = gauge("overdue_acks", "Expected device acks past their deadline and still missing.")
        openRevocations = gauge("open_revocations", "Revocations not yet applied by every device.")
        unverifiedAcks = gauge("unverified_acks", "Acks held until their revocation event arrives.")
        unsentNotifications = gauge("notification_outbox_unsent", "Notifications not yet acknowledged by Kafka.")
        commitToLastAck = registry.makeDurationHistogram(
            descriptor: Self.name("commit_to_last_ack", "seconds", "Revocation commit to the ack that completed it."),
            buckets: [
                .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2), .seconds(5),
                .seconds(10), .seconds(30), .seconds(60), .seconds(300), .seconds(3600),
            ])
        auditEntries = counter("log_entries", "Audit log entries appended.")
        notificationsPublished = counter("notifications_published", "Notifications delivered to Kafka.")
        openStreams = gauge("event_streams", "Event streams open on this replica.")
        streamsRefused = counter("event_streams_refused", "Event streams refused because the cap was reached.")
        slowStreamEnded = counter("event_streams_slow_ended", "Event streams ended because their reader fell behind.")
        stalledReadersClosed = counter(
            "stalled_readers_closed", "Connections closed because the client took nothing for the stalled-reader timeout.")
        monitoringUnauthenticated = counter("monitoring_unauthenticated", "Monitoring requests refused without a valid credential.")
        rejectedStoredRows = gauge(
            "rejected_messages_stored", "Rejected messages kept in rejected_messages (bounded per hour and pruned).")
        rejectedStoredBytes = gauge("rejected_messages_stored", unit: "bytes", "Bytes of rejected message bodies kept.")
        unverifiedAckBytes = gauge("unverified_acks", unit: "bytes", "Bytes of the acks held until their revocation event arrives.")
        rejectedBodiesNotStored = counter(
            "rejected_bodies_not_stored",
            "Rejected messages stored without their body: the hourly byte budget of its topic, partition and reason was spent.")
        requestsShed = counter(
            "requests_shed", "Requests answered 503 overloaded because the in-flight bound was reached.")
        requestsInFlight = gauge("requests_in_flight", "Requests being handled now.")
        buildInfo = registry.makeGauge(
            descriptor: MetricNameDescriptor(
                namespace: "rescind", metricName: "build_info", unitName: "", helpText: "Always 1, labelled with the build's version."),
            labels: [("version", RescindVersion.current)])
        buildInfo.set(to: 1)
        // Both classes from the start, at 0: a scrape tells "no failure" from "not exported".
        for label in ["transient", "content"] { _ = Self.handlingFailures(registry, class: label) }
        // So too every way a violation is known: the page on any violation (deploy/prometheus)
        // sees the first one as an increase from 0, not as a series that appeared.
        for verification in AuditNotification.ReporterVerification.allCases {
            _ = Self.keyChainViolations(registry, verification: verification.rawValue)
        }
    }

    /// `rescind_audit_<metric>_<unit>`.
    private static func name(_ metric: String, _ unit: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(namespace: "rescind", subsystem: "audit", metricName: metric, unitName: unit, helpText: help)
    }

    /// A counter (`_total`); the registry hands back the same one for the same name and labels.
    private static func counter(
        _ registry: PrometheusCollectorRegistry, _ metric: String, _ help: String, labels: [(String, String)] = []
    ) -> Counter {
        registry.makeCounter(descriptor: name(metric, "total", help), labels: labels)
    }

    /// A gauge; the registry hands back the same one for the same name and labels.
    private static func gauge(
        _ registry: PrometheusCollectorRegistry, _ metric: String, unit: String = "", _ help: String,
        labels: [(String, String)] = []
    ) -> Gauge {
        registry.makeGauge(descriptor: name(metric, unit, help), labels: labels)
    }

    /// A rejection counted but not stored: its topic, partition and reason had their hour's rows.
    func rejectionNotStored(reason: String) {
        Self.counter(
            registry, "rejections_not_stored",
            "Rejections counted (in messages_rejected too) but not stored: their hour's rows per topic, partition and reason were used.",
            labels: [("reason", reason)]
        ).increment()
    }

    /// A held (unverified) ack evicted to keep `pending_acks` bounded: `device_limit` or `total_limit`.
    func heldAckEvicted(cause: String) {
        Self.counter(
            registry, "unverified_acks_evicted",
            "Acks held before their revocation event and evicted (oldest first) to keep the hold bounded.", labels: [("cause", cause)]
        ).increment()
    }

    func consumed(_ topic: Topic) {
        Self.counter(
            registry, "messages_consumed", "Messages read from the input topics, accepted or not.", labels: [("topic", topic.rawValue)]
        ).increment()
    }

    /// A key chain violation a client reported and the service stored, by how the sender was known.
    func keyChainViolation(verification: String) {
        Self.keyChainViolations(registry, verification: verification).increment()
    }

    private static func keyChainViolations(_ registry: PrometheusCollectorRegistry, verification: String) -> Counter {
        counter(
            registry, "key_chain_violations",
            "Key chain violations reported by clients and stored (device_signature, device_token, unverified_device).",
            labels: [("verification", verification)])
    }

    func rejected(reason: String) {
        Self.counter(
            registry, "messages_rejected",
            "Messages refused or quarantined: unsigned, forged, malformed, out of limits, unknown or unprocessable.",
            labels: [("reason", reason)]
        ).increment()
    }

    /// One failed attempt to handle an input message, by class (`transient` or `content`).
    func handlingFailed(_ failure: HandlingFailure) {
        let label = switch failure { case .transient: "transient"; case .content: "content" }
        Self.handlingFailures(registry, class: label).increment()
    }

    private static func handlingFailures(_ registry: PrometheusCollectorRegistry, class label: String) -> Counter {
        counter(
            registry, "handling_failures",
            "Failed attempts to handle an input message: transient (retried) or content (quarantined).", labels: [("class", label)])
    }

    /// 1 while the consumer is retrying a message after a transient failure.
    func retrying(_ retrying: Bool) {
        Self.gauge(registry, "consumer_retrying", "1 while the input consumer retries a message after a transient failure.")
            .set(to: retrying ? 1 : 0)
    }

    /// Consumer lag in time: the age of the message just read (its broker timestamp).
    func lag(_ topic: Topic, seconds: Double) {
        Self.gauge(
            registry, "consumer_lag", unit: "seconds", "Age of the last message read from each input topic.",
            labels: [("topic", topic.rawValue)]
        ).set(to: max(0, seconds))
    }

    /// Consumer lag in messages: what the group has not committed yet on a partition this replica
    /// owns (`ConsumerLagProbe`), 0 for one it gave up.
    func consumerLag(_ topic: Topic, partition: Int32, messages: Int64) {
        Self.gauge(
            registry, "consumer_lag", unit: "messages",
            "Messages of each input partition this replica owns that the group has not committed (high watermark minus committed offset).",
            labels: [("topic", topic.rawValue), ("partition", String(partition))]
        ).set(to: Double(max(0, messages)))
    }

    /// `rescind_audit_device_commands{state}`: expected devices of open revocations in each
    /// lifecycle state (`DeviceAckState`: pending, delivered, not_now, overdue, failed, reissued,
    /// expired; done states count too until the revocation completes), refreshed by the deadline
    /// monitor from PostgreSQL. A state no open revocation holds reads 0.
    func deviceCommands(_ state: String, count: Int) {
        Self.gauge(
            registry, "device_commands", "Expected devices of open revocations, by command lifecycle state.",
            labels: [("state", state)]
        ).set(to: Double(count))
    }
}
