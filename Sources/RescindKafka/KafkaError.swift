/// The one error type of RescindKafka.
///
/// `code` says which operation failed and is stable across releases; match on it.
/// `rdKafkaCode` / `rdKafkaName` carry librdkafka's `rd_kafka_resp_err_t` when the
/// failure came from librdkafka or the broker (for example `_MSG_TIMED_OUT`,
/// `TOPIC_AUTHORIZATION_FAILED`). Descriptions hold librdkafka's generic error text
/// and topic names, never message keys, values, headers or configuration values.
public struct KafkaError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Stable identifier of the failed operation.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String

        public var description: String { rawValue }

        /// A configuration property was rejected by librdkafka.
        public static let configuration = Code(rawValue: "kafka.configuration")
        /// librdkafka could not create a client handle.
        public static let clientCreation = Code(rawValue: "kafka.client_creation")
        /// A message could not even be queued for sending (queue full, fatal producer state, …).
        public static let enqueue = Code(rawValue: "kafka.enqueue")
        /// A queued message was not acknowledged by the broker (timeout, permanent broker error, purge).
        public static let delivery = Code(rawValue: "kafka.delivery")
        /// `flush` did not drain the outgoing queue in time.
        public static let flush = Code(rawValue: "kafka.flush")
        /// Subscribing or assigning partitions failed.
        public static let subscription = Code(rawValue: "kafka.subscription")
        /// The consumer hit an error it cannot recover from; the message sequence ends with it.
        public static let consume = Code(rawValue: "kafka.consume")
        /// An offset commit failed; the message will be delivered again.
        public static let commit = Code(rawValue: "kafka.commit")
        /// Asking the brokers for a consumer's committed offsets or a partition's watermarks failed (its lag).
        public static let offsets = Code(rawValue: "kafka.offsets")
        /// An admin request (topic creation) failed.
        public static let admin = Code(rawValue: "kafka.admin")
        /// The client was already shut down or closed.
        public static let shutdown = Code(rawValue: "kafka.shutdown")
        /// A request to the development cluster (mock broker) failed.
        public static let developmentCluster = Code(rawValue: "kafka.development_cluster")
    }

    public let code: Code
    /// librdkafka's `rd_kafka_resp_err_t` value, when librdkafka or the broker reported one.
    public let rdKafkaCode: Int32?
    /// librdkafka's symbolic name for `rdKafkaCode` (`rd_kafka_err2name`), e.g. `_MSG_TIMED_OUT`.
    public let rdKafkaName: String?
    /// Human-readable detail; never contains payload bytes or configuration values.
    public let detail: String

    init(code: Code, rdKafkaCode: Int32? = nil, rdKafkaName: String? = nil, detail: String) {
        self.code = code
        self.rdKafkaCode = rdKafkaCode
        self.rdKafkaName = rdKafkaName
        self.detail = detail
    }

    public var description: String {
        if let rdKafkaName, let rdKafkaCode {
            return "KafkaError(\(code)): \(rdKafkaName) (\(rdKafkaCode)): \(detail)"
        }
        return "KafkaError(\(code)): \(detail)"
    }
}
