/// Every metadata key of Rescind's structured logs, in one place, used by every module, so that
/// log queries (and whoever reads the logs) can rely on one name per fact.
///
/// Naming: `rescind.<fact>` for Rescind's own facts (identifiers end in `_id`), `kafka.*` and
/// `postgres.*` / `migration.*` for where in a broker or database something happened. Values never
/// carry secrets, keys, tokens or record contents; errors are logged with `error`.
public enum LogKey {
    // MARK: Errors

    /// The error's description (`"\(error)"`).
    public static let error = "rescind.error"
    /// The error's Swift type, where the description alone would not say (the HTTP error middleware).
    public static let errorType = "rescind.error_type"

    // MARK: Who and what

    public static let userID = "rescind.user_id"
    public static let deviceID = "rescind.device_id"
    public static let familyMemberID = "rescind.family_member_id"
    /// A revocation event's id.
    public static let eventID = "rescind.event_id"
    /// A device command's id.
    public static let command = "rescind.command"
    /// A governance notice's id (`GovernanceNotice`).
    public static let notice = "rescind.notice"
    /// A device command's action (`fmk_rotation`, `secure_deletion`, …).
    public static let action = "rescind.action"
    /// An ack's outcome.
    public static let outcome = "rescind.outcome"
    public static let fmkVersion = "rescind.fmk_version"
    public static let previousFMKVersion = "rescind.previous_fmk_version"
    /// How many records (re-encrypted, erased, …).
    public static let records = "rescind.records"
    /// How many devices (commanded, …).
    public static let devices = "rescind.devices"
    /// How many grants (purged, …).
    public static let grants = "rescind.grants"
    /// How many device commands (pruned past retention, …).
    public static let commands = "rescind.commands"
    /// How many entries (of a sealed inbox, …).
    public static let entries = "rescind.entries"
    /// How many acks.
    public static let acks = "rescind.acks"
    /// How many family members a self-healing pass rotated, erased, synced or refused.
    public static let rotated = "rescind.rotated"
    public static let erased = "rescind.erased"
    public static let synced = "rescind.synced"
    public static let refused = "rescind.refused"
    /// A public key (never a private one).
    public static let key = "rescind.key"
    public static let durationMs = "rescind.duration_ms"
    /// Why something was refused or rejected.
    public static let reason = "rescind.reason"
    /// What triggered a change (a command, self-healing, …).
    public static let source = "rescind.source"
    /// A failure's class (`transient`, `content`).
    public static let failure = "rescind.failure"
    /// Which attempt this was.
    public static let attempt = "rescind.attempt"
    /// The delay before the next attempt.
    public static let retryIn = "rescind.retry_in"
    /// The TCP port a server listens on.
    public static let port = "rescind.port"
    /// How long graceful shutdown may take (`ShutdownDeadline`), in seconds.
    public static let graceSeconds = "rescind.grace_seconds"
    /// The status a process exits with.
    public static let exitStatus = "rescind.exit_status"

    // MARK: Kafka

    public static let topic = "kafka.topic"
    public static let partition = "kafka.partition"
    /// Several `topic[partition]`s (a rebalance).
    public static let partitions = "kafka.partitions"
    public static let offset = "kafka.offset"
    /// librdkafka's log facility.
    public static let facility = "kafka.facility"

    // MARK: PostgreSQL

    public static let sqlState = "postgres.sqlstate"
    public static let backendPID = "postgres.backend_pid"
    public static let migrationName = "migration.name"
    public static let migrationVersion = "migration.version"
    public static let migrationSchema = "migration.schema"
    /// The migrations applied at start-up.
    public static let migrationsApplied = "migration.applied"
}
