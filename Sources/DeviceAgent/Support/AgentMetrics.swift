import Metrics
import RescindProtocol

/// The agent's metrics, by swift-metrics (whatever backend the process bootstrapped; the
/// `rescind-agent` executable uses Prometheus, see `AgentMetricsExport`). Labels carry
/// actions, outcomes and reasons, never identifiers or secrets.
enum AgentMetrics {
    /// A command stored in the inbox (or sealed while locked).
    static func received(_ action: DeviceAction, locked: Bool) {
        Counter(label: "rescind_agent_commands_received_total", dimensions: [("action", action.rawValue), ("locked", "\(locked)")])
            .increment()
    }

    static func rejected(_ reason: CommandValidation.Rejection) {
        Counter(label: "rescind_agent_commands_rejected_total", dimensions: [("reason", reason.rawValue)]).increment()
    }

    /// A `device_commands` message skipped because it could not be taken in, by the failure's class.
    static func quarantined(_ failure: CommandFailure) {
        Counter(label: "rescind_agent_commands_quarantined_total", dimensions: [("class", "\(failure)")]).increment()
    }

    /// A transient failure taking in a `device_commands` message, retried.
    static func retried() {
        Counter(label: "rescind_agent_command_retries_total").increment()
    }

    /// A command carried out (or found already applied), with how long it took.
    static func completed(_ action: DeviceAction, outcome: DeviceAck.Outcome, locked: Bool, duration: Duration) {
        Counter(
            label: "rescind_agent_commands_completed_total",
            dimensions: [("action", action.rawValue), ("outcome", outcome.rawValue), ("locked", "\(locked)")]
        ).increment()
        Metrics.Timer(label: "rescind_agent_command_duration_seconds", dimensions: [("action", action.rawValue)])
            .recordNanoseconds(Int64(duration.wholeMilliseconds) * 1_000_000)
    }

    /// A change self-healing made without a command: `rotated`, `erased` or `refused`.
    static func selfHeal(_ change: String) {
        Counter(label: "rescind_agent_self_heal_changes_total", dimensions: [("change", change)]).increment()
    }

    static func acksPublished(_ count: Int) {
        Counter(label: "rescind_agent_acks_published_total").increment(by: count)
    }

    /// Acks signed and not yet acknowledged by the broker.
    static func acksOwed(_ count: Int) {
        Gauge(label: "rescind_agent_acks_owed").record(count)
    }

    /// 1 while the agent runs without its keys.
    static func locked(_ locked: Bool) {
        Gauge(label: "rescind_agent_locked").record(locked ? 1 : 0)
    }
}
