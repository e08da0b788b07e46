/// Settings of a `KafkaProducer`: a few typed fields with server-side defaults plus a
/// raw escape hatch. The delivery guarantees (idempotence, `acks=all`) are not settings.
public struct KafkaProducerConfiguration: Sendable {
    /// Comma-separated `host:port` list (`bootstrap.servers`). Always taken from the
    /// deployment's configuration; nothing assumes the development broker.
    public var bootstrapServers: String
    /// Names this client in broker logs and quotas (`client.id`).
    public var clientID: String
    /// How long to wait for more messages to batch before sending (`linger.ms`).
    /// Default 5 ms: low latency for revocation events, still some batching under load.
    public var linger: Duration
    /// Longest time from `send` to acknowledgement, retries included
    /// (`message.timeout.ms`). When it passes, `send` throws `_MSG_TIMED_OUT`. Default 60 s.
    public var messageTimeout: Duration
    /// Timeout of one produce request at the broker (`request.timeout.ms`). Default 30 s.
    public var requestTimeout: Duration
    /// Raw librdkafka properties (for example `security.protocol`, `sasl.*`,
    /// `compression.type`). They override the typed fields above, but not
    /// `enable.idempotence`, `acks` or `log.queue`, which the producer needs.
    public var additionalProperties: [String: String]

    public init(
        bootstrapServers: String,
        clientID: String = "rescind",
        linger: Duration = .milliseconds(5),
        messageTimeout: Duration = .seconds(60),
        requestTimeout: Duration = .seconds(30),
        additionalProperties: [String: String] = [:]
    ) {
        self.bootstrapServers = bootstrapServers
        self.clientID = clientID
        self.linger = linger
        self.messageTimeout = messageTimeout
        self.requestTimeout = requestTimeout
        self.additionalProperties = additionalProperties
    }

    /// The librdkafka properties the producer is created with.
    var properties: [String: String] {
        var properties: [String: String] = [
            "bootstrap.servers": bootstrapServers,
            "client.id": clientID,
            "linger.ms": linger.configurationMilliseconds,
            "message.timeout.ms": messageTimeout.configurationMilliseconds,
            "request.timeout.ms": requestTimeout.configurationMilliseconds,
            // Same key → same partition as the Java client, so mixed producers keep per-key order.
            "partitioner": "murmur2_random",
        ]
        properties.merge(additionalProperties) { _, raw in raw }
        // No duplicates and no reordering on retry; acknowledged means on every in-sync replica.
        properties["enable.idempotence"] = "true"
        properties["acks"] = "all"
        // Logs go to the main queue, which the poll thread forwards to the Logger.
        properties["log.queue"] = "true"
        return properties
    }
}
