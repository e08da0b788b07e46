import RescindMacros

/// One NOTIFY received by a `PostgresNotificationListener`.
@MemberwiseInit
public struct PostgresNotification: Sendable, Hashable {
    /// The channel, exactly as given to LISTEN / `pg_notify` (case-sensitive).
    public let channel: String
    /// The payload; empty when NOTIFY had none.
    public let payload: String
    /// The server process that sent it.
    public let backendPID: Int32
}
