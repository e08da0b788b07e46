/// One NOTIFY received by a `PostgresNotificationListener`.
public struct PostgresNotification: Sendable, Hashable {
    /// The channel, exactly as given to LISTEN / `pg_notify` (case-sensitive).
    public let channel: String
    /// The payload; empty when NOTIFY had none.
    public let payload: String
    /// The server process that sent it.
    public let backendPID: Int32

    public init(channel: String, payload: String, backendPID: Int32) {
        self.channel = channel
        self.payload = payload
        self.backendPID = backendPID
    }
}
