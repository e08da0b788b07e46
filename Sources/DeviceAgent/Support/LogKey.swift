/// Metadata keys of the agent's structured logs, in one place so that log queries and the
/// demo can rely on them. Values never carry secrets.
enum LogKey {
    static let device = "rescind.device"
    static let familyMember = "rescind.family_member"
    static let command = "rescind.command"
    static let action = "rescind.action"
    static let outcome = "rescind.outcome"
    static let fmkVersion = "rescind.fmk_version"
    static let previousVersion = "rescind.previous_fmk_version"
    static let records = "rescind.records"
    static let durationMs = "rescind.duration_ms"
    static let reason = "rescind.reason"
    static let error = "rescind.error"
    static let acks = "rescind.acks"
    static let source = "rescind.source"
}
