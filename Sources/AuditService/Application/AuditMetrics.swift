import Prometheus
import RescindProtocol

/// The audit service's Prometheus metrics, in a registry of its own.
///
/// A registry per application instance (not the process-wide swift-metrics backend)
/// lets a test process run a grant service and several audit services side by side,
/// each exporting only its own numbers on `/metrics`.
final class AuditMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()

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

    init() {
        func name(_ metric: String, _ unit: String, _ help: String) -> MetricNameDescriptor {
            MetricNameDescriptor(namespace: "rescind", subsystem: "audit", metricName: metric, unitName: unit, helpText: help)
        }
        pendingAcks = registry.makeGauge(
            descriptor: name("pending_acks", "", "Expected device acks not yet received (pending or overdue)."))
        overdueAcks = registry.makeGauge(
            descriptor: name("overdue_acks", "", "Expected device acks past their deadline and still missing."))
        openRevocations = registry.makeGauge(
            descriptor: name("open_revocations", "", "Revocations not yet applied by every device."))
        unverifiedAcks = registry.makeGauge(
            descriptor: name("unverified_acks", "", "Acks held until their revocation event arrives."))
        unsentNotifications = registry.makeGauge(
            descriptor: name("notification_outbox_unsent", "", "Notifications not yet acknowledged by Kafka."))
        commitToLastAck = registry.makeDurationHistogram(
            descriptor: name("commit_to_last_ack", "seconds", "Revocation commit to the ack that completed it."),
            buckets: [
                .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2), .seconds(5),
                .seconds(10), .seconds(30), .seconds(60), .seconds(300), .seconds(3600),
            ])
        auditEntries = registry.makeCounter(descriptor: name("log_entries", "total", "Audit log entries appended."))
        notificationsPublished = registry.makeCounter(
            descriptor: name("notifications_published", "total", "Notifications delivered to Kafka."))
        openStreams = registry.makeGauge(descriptor: name("event_streams", "", "Event streams open on this replica."))
        streamsRefused = registry.makeCounter(
            descriptor: name("event_streams_refused", "total", "Event streams refused because the cap was reached."))
        slowStreamEnded = registry.makeCounter(
            descriptor: name("event_streams_slow_ended", "total", "Event streams ended because their reader fell behind."))
        stalledReadersClosed = registry.makeCounter(
            descriptor: name(
                "stalled_readers_closed", "total", "Connections closed because the client took nothing for the stalled-reader timeout."))
        monitoringUnauthenticated = registry.makeCounter(
            descriptor: name(
                "monitoring_unauthenticated", "total", "Monitoring requests refused without a valid credential."))
        rejectedStoredRows = registry.makeGauge(
            descriptor: name("rejected_messages_stored", "", "Rejected messages kept in rejected_messages (bounded per hour and pruned)."))
        rejectedStoredBytes = registry.makeGauge(
            descriptor: name("rejected_messages_stored", "bytes", "Bytes of rejected message bodies kept."))
        unverifiedAckBytes = registry.makeGauge(
            descriptor: name("unverified_acks", "bytes", "Bytes of the acks held until their revocation event arrives."))
        rejectedBodiesNotStored = registry.makeCounter(
            descriptor: name(
                "rejected_bodies_not_stored", "total",
                "Rejected messages stored without their body: the hourly byte budget of its topic, partition and reason was spent."))
    }

    /// A rejection counted but not stored: its topic, partition and reason had their hour's rows.
    func rejectionNotStored(reason: String) {
        registry.makeCounter(
            descriptor: MetricNameDescriptor(
                namespace: "rescind", subsystem: "audit", metricName: "rejections_not_stored", unitName: "total",
                helpText: "Rejections counted (in messages_rejected too) but not stored: their hour's rows per topic, partition and reason were used."),
            labels: [("reason", reason)]
        ).increment()
    }

    /// A held (unverified) ack evicted to keep `pending_acks` bounded: `device_limit` or `total_limit`.
    func heldAckEvicted(cause: String) {
        registry.makeCounter(
            descriptor: MetricNameDescriptor(
                namespace: "rescind", subsystem: "audit", metricName: "unverified_acks_evicted", unitName: "total",
                helpText: "Acks held before their revocation event and evicted (oldest first) to keep the hold bounded."),
            labels: [("cause", cause)]
        ).increment()
    }

    func consumed(_ topic: Topic) {
        registry.makeCounter(
            descriptor: MetricNameDescriptor(
                namespace: "rescind", subsystem: "audit", metricName: "messages_consumed", unitName: "total",
                helpText: "Messages read from the input topics, accepted or not."),
            labels: [("topic", topic.rawValue)]
        ).increment()
    }

    /// A key chain violation a client reported and the service stored, by how the sender was known.
    func keyChainViolation(verification: String) {
        registry.makeCounter(
            descriptor: MetricNameDescriptor(
                namespace: "rescind", subsystem: "audit", metricName: "key_chain_violations", unitName: "total",
                helpText: "Key chain violations reported by clients and stored (device_signature, device_token, unverified_device)."),
            labels: [("verification", verification)]
        ).increment()
    }

    func rejected(reason: String) {
        registry.makeCounter(
            descriptor: MetricNameDescriptor(
                namespace: "rescind", subsystem: "audit", metricName: "messages_rejected", unitName: "total",
                helpText: "Messages refused or quarantined: unsigned, forged, malformed, out of limits, unknown or unprocessable."),
            labels: [("reason", reason)]
        ).increment()
    }

    /// One failed attempt to handle an input message, by class (`transient` or `content`).
    func handlingFailed(_ failure: HandlingFailure) {
        let label = switch failure { case .transient: "transient"; case .content: "content" }
        registry.makeCounter(
            descriptor: MetricNameDescriptor(
                namespace: "rescind", subsystem: "audit", metricName: "handling_failures", unitName: "total",
                helpText: "Failed attempts to handle an input message: transient (retried) or content (quarantined)."),
            labels: [("class", label)]
        ).increment()
    }

    /// 1 while the consumer is retrying a message after a transient failure.
    func retrying(_ retrying: Bool) {
        registry.makeGauge(
            descriptor: MetricNameDescriptor(
                namespace: "rescind", subsystem: "audit", metricName: "consumer_retrying", unitName: "",
                helpText: "1 while the input consumer retries a message after a transient failure.")
        ).set(to: retrying ? 1 : 0)
    }

    /// Consumer lag in time: the age of the message just read (its broker timestamp).
    func lag(_ topic: Topic, seconds: Double) {
        registry.makeGauge(
            descriptor: MetricNameDescriptor(
                namespace: "rescind", subsystem: "audit", metricName: "consumer_lag", unitName: "seconds",
                helpText: "Age of the last message read from each input topic."),
            labels: [("topic", topic.rawValue)]
        ).set(to: max(0, seconds))
    }

    /// `rescind_audit_device_commands{state}`: expected devices of open revocations in each
    /// lifecycle state (`DeviceAckState`: pending, delivered, not_now, overdue, failed, reissued,
    /// expired; done states count too until the revocation completes), refreshed by the deadline
    /// monitor from PostgreSQL. A state no open revocation holds reads 0.
    func deviceCommands(_ state: String, count: Int) {
        registry.makeGauge(
            descriptor: MetricNameDescriptor(
                namespace: "rescind", subsystem: "audit", metricName: "device_commands", unitName: "",
                helpText: "Expected devices of open revocations, by command lifecycle state."),
            labels: [("state", state)]
        ).set(to: Double(count))
    }
}
