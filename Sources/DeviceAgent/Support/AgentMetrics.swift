import Prometheus
import RescindObservability
import RescindProtocol

/// The agent's metrics: every metric it exports is named and documented here, and this is the
/// only place that makes metric handles (the architecture tests check it). Unlabelled metrics
/// are created once, in `init`; a labelled family is made by the method that records it.
/// Labels carry actions, outcomes and reasons, never identifiers or secrets.
///
/// `process` is the agent's registry, the one `AgentMetricsExport` writes to the metrics file
/// (one agent per process; agents sharing a test process share it, as before).
final class AgentMetrics: Sendable {
    static let process = AgentMetrics(registry: PrometheusCollectorRegistry())

    let registry: PrometheusCollectorRegistry
    /// `rescind_agent_command_retries_total`: transient failures taking in a `device_commands` message, retried.
    private let commandRetries: Counter
    /// `rescind_agent_acks_published_total`: acks the broker acknowledged.
    private let acksPublishedTotal: Counter
    /// `rescind_agent_receipts_published_total`: receipts (`delivered`, `not_now`) the broker acknowledged.
    private let receiptsPublishedTotal: Counter
    /// `rescind_agent_acks_owed`: acks signed and not yet acknowledged by the broker.
    private let acksOwedGauge: Gauge
    /// `rescind_agent_locked`: 1 while the agent runs without its keys.
    private let lockedGauge: Gauge
    /// `rescind_agent_broker_up`: whether the brokers answered the last lag probe. Not
    /// `rescind_broker_up`: a device off the network is normal, and must not page as a service would.
    private let brokerUpGauge: Gauge
    /// `rescind_build_info{version}` (one name across components): always 1, labelled with
    /// `RescindVersion.current`.
    private let buildInfo: Gauge

    /// The buckets of `rescind_agent_command_duration_seconds` (swift-prometheus's default for timers).
    static let durationBuckets: [Duration] = [
        .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250),
        .milliseconds(500), .seconds(1), .milliseconds(2500), .seconds(5), .seconds(10),
    ]

    /// `rescind_agent_<metric>_<unit>`.
    static func name(_ metric: String, _ unit: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(namespace: "rescind", subsystem: "agent", metricName: metric, unitName: unit, helpText: help)
    }

    init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
        commandRetries = registry.makeCounter(
            descriptor: Self.name("command_retries", "total", "Transient failures taking in a device command, retried."))
        acksPublishedTotal = registry.makeCounter(
            descriptor: Self.name("acks_published", "total", "Acks the broker acknowledged."))
        receiptsPublishedTotal = registry.makeCounter(
            descriptor: Self.name("receipts_published", "total", "Receipts (delivered, not now) the broker acknowledged."))
        acksOwedGauge = registry.makeGauge(
            descriptor: Self.name("acks_owed", "", "Acks signed and not yet acknowledged by the broker."))
        lockedGauge = registry.makeGauge(descriptor: Self.name("locked", "", "1 while the agent runs without its keys."))
        brokerUpGauge = registry.makeGauge(
            descriptor: Self.name("broker_up", "", "1 while the Kafka brokers answered the last lag probe, 0 after they did not."))
        buildInfo = registry.makeGauge(
            descriptor: MetricNameDescriptor(
                namespace: "rescind", metricName: "build_info", unitName: "", helpText: "Always 1, labelled with the build's version."),
            labels: [("version", RescindVersion.current)])
        buildInfo.set(to: 1)
    }

    /// `rescind_agent_commands_received_total{action,locked}`: a command stored in the inbox (or sealed while locked).
    func received(_ action: DeviceAction, locked: Bool) {
        registry.makeCounter(
            descriptor: Self.name("commands_received", "total", "Commands stored in the inbox (or sealed while locked)."),
            labels: [("action", action.rawValue), ("locked", "\(locked)")]
        ).increment()
    }

    /// `rescind_agent_commands_rejected_total{reason}`: a command refused by validation.
    /// `rescind_agent_governance_notices_total{change,state}`: governance notices kept.
    func governanceNotice(_ notice: GovernanceNotice) {
        registry.makeCounter(
            descriptor: Self.name("governance_notices", "total", "Governance notices addressed to this device and kept."),
            labels: [("change", notice.change.rawValue), ("state", notice.state.rawValue)]
        ).increment()
    }

    func rejected(_ reason: CommandValidation.Rejection) {
        registry.makeCounter(
            descriptor: Self.name("commands_rejected", "total", "Commands refused by validation."), labels: [("reason", reason.rawValue)]
        ).increment()
    }

    /// `rescind_agent_commands_quarantined_total{class}`: a `device_commands` message skipped because it
    /// could not be taken in, by the failure's class.
    func quarantined(_ failure: CommandFailure) {
        registry.makeCounter(
            descriptor: Self.name("commands_quarantined", "total", "Device command messages that could not be taken in."),
            labels: [("class", "\(failure)")]
        ).increment()
    }

    func retried() {
        commandRetries.increment()
    }

    /// `rescind_agent_commands_completed_total{action,outcome,locked}` and
    /// `rescind_agent_command_duration_seconds{action}`: a command carried out (or found already
    /// applied), with how long it took.
    func completed(_ action: DeviceAction, outcome: DeviceAck.Outcome, locked: Bool, duration: Duration) {
        registry.makeCounter(
            descriptor: Self.name("commands_completed", "total", "Commands carried out or found already applied."),
            labels: [("action", action.rawValue), ("outcome", outcome.rawValue), ("locked", "\(locked)")]
        ).increment()
        registry.makeDurationHistogram(
            descriptor: Self.name("command_duration", "seconds", "How long carrying out a command took."),
            labels: [("action", action.rawValue)], buckets: Self.durationBuckets
        ).recordNanoseconds(Int64(duration.wholeMilliseconds) * 1_000_000)
    }

    /// `rescind_agent_rotation_phase_seconds{phase}` (wall clock: `key`, `download`, `verify`, `store`,
    /// `commit`, `hand_off`) and `rescind_agent_rotation_cpu_seconds{phase}` (the verifying and the
    /// store's thread: `verify`, `store`): one FMK rotation, from the command's start to its ack
    /// handed to the producer, by phase (`RotationPhases`).
    func rotated(_ phases: RotationPhases) {
        for (phase, duration) in phases.named {
            registry.makeDurationHistogram(
                descriptor: Self.name("rotation_phase", "seconds", "One FMK rotation's wall-clock time by phase."),
                labels: [("phase", phase)], buckets: Self.phaseBuckets
            ).record(duration)
        }
        for (phase, duration) in [("verify", phases.verifyCPU), ("store", phases.storeCPU)] {
            registry.makeDurationHistogram(
                descriptor: Self.name("rotation_cpu", "seconds", "One FMK rotation's CPU time by phase (the thread running it)."),
                labels: [("phase", phase)], buckets: Self.phaseBuckets
            ).record(duration)
        }
    }

    /// The buckets of the rotation's phases: finer than a command's (phases of a few milliseconds).
    static let phaseBuckets: [Duration] = [
        .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
        .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500),
    ]

    /// `rescind_agent_self_heal_changes_total{change}`: a change self-healing made without a
    /// command: `rotated`, `erased` or `refused`.
    func selfHeal(_ change: String) {
        registry.makeCounter(
            descriptor: Self.name("self_heal_changes", "total", "Changes self-healing made without a command."),
            labels: [("change", change)]
        ).increment()
    }

    func acksPublished(_ count: Int) {
        acksPublishedTotal.increment(by: Int64(count))
    }

    func receiptsPublished(_ count: Int) {
        if count > 0 { receiptsPublishedTotal.increment(by: Int64(count)) }
    }

    func acksOwed(_ count: Int) {
        acksOwedGauge.set(to: Double(count))
    }

    /// The last lag probe: `nil` when the brokers did not answer (only `rescind_agent_broker_up`
    /// changes), else `rescind_agent_command_lag_messages{partition}` for each partition of
    /// `device_commands` the agent owns: messages its group has not committed (other devices'
    /// commands it skipped count until their offsets are committed, at most a second after the next message).
    func commandLag(_ partitions: [(partition: Int32, messages: Int64)]?) {
        brokerUpGauge.set(to: partitions == nil ? 0 : 1)
        for (partition, messages) in partitions ?? [] {
            registry.makeGauge(
                descriptor: Self.name(
                    "command_lag", "messages", "Messages of each device_commands partition the agent's group has not committed."),
                labels: [("partition", String(partition))]
            ).set(to: Double(max(0, messages)))
        }
    }

    func locked(_ locked: Bool) {
        lockedGauge.set(to: locked ? 1 : 0)
    }
}
