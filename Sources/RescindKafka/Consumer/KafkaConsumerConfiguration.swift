import Foundation

/// Settings of a `KafkaConsumer`: a few typed fields with server-side defaults plus a
/// raw escape hatch. Offset handling (no automatic commits) is not a setting.
public struct KafkaConsumerConfiguration: Sendable {
    /// Where a group without a committed offset starts reading (`auto.offset.reset`).
    public enum AutoOffsetReset: String, Sendable {
        /// Oldest retained record: nothing published before the group existed is skipped.
        case earliest
        /// Only records published after the consumer started.
        case latest
    }

    /// Comma-separated `host:port` list (`bootstrap.servers`). Always taken from the
    /// deployment's configuration; nothing assumes the development broker.
    public var bootstrapServers: String
    /// Names this client in broker logs and quotas (`client.id`).
    public var clientID: String
    /// Consumer group (`group.id`). Required to subscribe, and to commit in a way the
    /// next consumer of the group sees; optional for a consumer that only reads assigned
    /// partitions (a topic tail), which then uses a private throwaway group.
    public var groupID: String?
    /// Default `.earliest`, the at-least-once choice for a new group.
    public var autoOffsetReset: AutoOffsetReset
    /// A member silent for this long is removed from the group (`session.timeout.ms`). Default 45 s.
    public var sessionTimeout: Duration
    /// How often the member tells the coordinator it is alive (`heartbeat.interval.ms`);
    /// also how fast it notices a rebalance. Default 3 s.
    public var heartbeatInterval: Duration
    /// Longest time between two reads of the message sequence before the member is
    /// considered stuck and leaves the group (`max.poll.interval.ms`); a slow handler
    /// must stay below it. Default 5 min.
    public var maxPollInterval: Duration
    /// Messages fetched ahead of the handler. The poll thread pauses (and so does
    /// rebalance handling) while this many are waiting. Default 64.
    public var maxBufferedMessages: Int
    /// How often the cluster's metadata is read again (`topic.metadata.refresh.interval.ms`).
    /// It is also how soon a subscription to a topic that did not exist yet picks the topic
    /// up once it is created (librdkafka only looks again at its next refresh). Default 5 s
    /// (librdkafka's own is 5 minutes).
    public var metadataRefreshInterval: Duration
    /// Raw librdkafka properties (for example `security.protocol`, `sasl.*`,
    /// `fetch.wait.max.ms`). They override the typed fields above, but not
    /// `enable.auto.commit`, `enable.auto.offset.store` or `log.queue`.
    public var additionalProperties: [String: String]

    public init(
        bootstrapServers: String,
        clientID: String = "rescind",
        groupID: String? = nil,
        autoOffsetReset: AutoOffsetReset = .earliest,
        sessionTimeout: Duration = .seconds(45),
        heartbeatInterval: Duration = .seconds(3),
        maxPollInterval: Duration = .seconds(300),
        maxBufferedMessages: Int = 64,
        metadataRefreshInterval: Duration = .seconds(5),
        additionalProperties: [String: String] = [:]
    ) {
        self.bootstrapServers = bootstrapServers
        self.clientID = clientID
        self.groupID = groupID
        self.autoOffsetReset = autoOffsetReset
        self.sessionTimeout = sessionTimeout
        self.heartbeatInterval = heartbeatInterval
        self.maxPollInterval = maxPollInterval
        self.maxBufferedMessages = maxBufferedMessages
        self.metadataRefreshInterval = metadataRefreshInterval
        self.additionalProperties = additionalProperties
    }

    /// The librdkafka properties the consumer is created with.
    var properties: [String: String] {
        var properties: [String: String] = [
            "bootstrap.servers": bootstrapServers,
            "client.id": clientID,
            "auto.offset.reset": autoOffsetReset.rawValue,
            "session.timeout.ms": sessionTimeout.configurationMilliseconds,
            "heartbeat.interval.ms": heartbeatInterval.configurationMilliseconds,
            "max.poll.interval.ms": maxPollInterval.configurationMilliseconds,
            "topic.metadata.refresh.interval.ms": metadataRefreshInterval.configurationMilliseconds,
        ]
        // librdkafka's consumer needs a group even for manual assignment (it never joins
        // it then); a consumer without one gets a private throwaway group.
        properties["group.id"] = groupID ?? "\(clientID)-unassigned-\(UUID().uuidString.lowercased())"
        properties.merge(additionalProperties) { _, raw in raw }
        // At-least-once: an offset is committed only by `commit(_:)`, after the handler succeeded.
        properties["enable.auto.commit"] = "false"
        properties["enable.auto.offset.store"] = "false"
        // Logs go to the main queue, forwarded to the consumer queue the poll thread serves.
        properties["log.queue"] = "true"
        return properties
    }
}
