import Foundation
import RescindConfiguration
import RescindObservability
import RescindServiceSupport
import RescindTLS

/// Everything the audit service can be told, with the defaults it runs with.
/// Filled from environment variables in `init(environment:)` only.
public struct AuditServiceConfiguration: ServiceProcessConfiguration {
    public struct HTTP: Sendable {
        /// Address to bind; `RESCIND_AUDIT_HOST`.
        public var host = "127.0.0.1"
        /// Port to bind, 0 for any free port; `RESCIND_AUDIT_PORT`.
        public var port = 8081
        /// A port of its own for `/metrics` (same address, same TLS), so that a network policy,
        /// which admits by port and not by path, can open it to the scraper alone; the main port
        /// then answers 404 there. `nil` (unset): `/metrics` on the main port; 0: any free port;
        /// `RESCIND_AUDIT_METRICS_PORT`.
        public var metricsPort: Int?
        /// Certificate chain and key (PEM) to serve HTTPS with; `RESCIND_AUDIT_TLS_CERT_FILE` and
        /// `RESCIND_AUDIT_TLS_KEY_FILE`, both or neither. `nil`: plain HTTP.
        public var tls: ServerTLS?
        /// Requests handled at once; one more is answered 503 `overloaded` at once (health,
        /// readiness and metrics are never counted); `RESCIND_AUDIT_MAX_IN_FLIGHT`.
        public var maxInFlight = 512
    }

    public struct Database: Sendable {
        /// libpq connection URL; `RESCIND_DATABASE_URL` (shared with the grant service, other schema).
        public var url = "postgres://rescind:rescind@127.0.0.1:54329/rescind"
        /// The service's own schema; `RESCIND_AUDIT_DB_SCHEMA`.
        public var schema = "audit_service"
        /// Connections in the pool; `RESCIND_AUDIT_DB_POOL_SIZE`.
        public var poolSize = 6
        /// Apply pending migrations at start; `RESCIND_AUDIT_MIGRATE`.
        public var migrateOnStart = true
        /// Directory of the schema's `*.sql` migrations; `RESCIND_AUDIT_MIGRATIONS_DIR`.
        public var migrationsDirectory = "migrations/audit"
        /// The longest one database call (a statement, a COPY chunk, a wait for a pooled
        /// connection) waits for an answer; past it the request answers 503
        /// `database_unavailable` and the connection is closed; `RESCIND_DATABASE_TIMEOUT_SECONDS`.
        public var callTimeout: Duration = .seconds(5)
    }

    public struct Kafka: Sendable {
        /// `RESCIND_KAFKA_BOOTSTRAP_SERVERS`.
        public var bootstrapServers = "127.0.0.1:9092"
        /// Prepended to every topic name; `RESCIND_TOPIC_PREFIX`.
        public var topicPrefix = ""
        /// Replicas of the audit service share the input partitions through this group;
        /// `RESCIND_AUDIT_CONSUMER_GROUP`.
        public var consumerGroup = "rescind-audit-service"
        /// `session.timeout.ms`; `RESCIND_AUDIT_KAFKA_SESSION_TIMEOUT_MS`. Short values
        /// make rebalances (and tests against the mock broker) faster.
        public var sessionTimeout: Duration = .seconds(45)
        /// `heartbeat.interval.ms`; `RESCIND_AUDIT_KAFKA_HEARTBEAT_MS`.
        public var heartbeatInterval: Duration = .seconds(3)
        /// Raw librdkafka properties of the consumer (security, tuning). From the environment:
        /// TLS and SASL (`RESCIND_KAFKA_SECURITY_PROTOCOL`, `RESCIND_KAFKA_SSL_*`, `RESCIND_KAFKA_SASL_*`)
        /// and `fetch.wait.max.ms` from `RESCIND_KAFKA_FETCH_WAIT_MS` (0…10000, unset keeps
        /// librdkafka's 500), for brokers that answer a waiting fetch only when it expires.
        public var consumerProperties: [String: String] = [:]
        /// Raw librdkafka properties of the notification producer; TLS and SASL as the consumer's.
        public var producerProperties: [String: String] = [:]
        /// How a message whose handling failed transiently is retried.
        public var handlingRetry = HandlingRetry()
        /// `/ready` answers 503 until the service's four topics exist (they are provisioned by
        /// `rescind-admin migrate kafka`); false when `RESCIND_KAFKA_TOPICS_AUTO_CREATED=true` (a broker
        /// that creates topics on first use, as the development broker does).
        public var checkTopics = true
    }

    /// Retries of one input message whose handling failed for a reason outside the message
    /// (storage unavailable): backoff doubling from `firstDelay` up to `maximumDelay`, and after
    /// `budget` attempts while the database answers, the message is quarantined as
    /// `retries_exhausted` (the backstop for a misclassified failure).
    public struct HandlingRetry: Sendable {
        public var budget = 10
        public var firstDelay: Duration = .milliseconds(100)
        public var maximumDelay: Duration = .seconds(5)
        public init() {}
    }

    /// How the grant service's message-signing key is obtained.
    public struct GrantService: Sendable {
        /// Base64 of the grant service's Ed25519 public key, pinned;
        /// `RESCIND_GRANT_SERVICE_PUBLIC_KEY`, or read from the file named by
        /// `RESCIND_GRANT_SERVICE_PUBLIC_KEY_FILE` (base64 or the 32 raw bytes, e.g. a mounted
        /// secret). Takes precedence over fetching.
        public var publicKey: String?
        /// Base URL of the grant service; `RESCIND_GRANT_SERVICE_URL`. Without a pinned key,
        /// the key is fetched from its `GET /v1/service-key` at start. The access-log API
        /// also needs it: it asks the grant service who a bearer token belongs to.
        public var url: String?
        /// How that URL is reached: `RESCIND_CA_FILE` (PEM CAs the grant service's certificate is
        /// checked against; unset: the system's roots) and `RESCIND_ALLOW_PLAIN_HTTP` (`loopback`
        /// allows `http://` to a loopback address; anything else is refused).
        public var tls = ClientTLS.strict
    }

    public struct Tracking: Sendable {
        /// A device that has not acknowledged this long after the commit is overdue;
        /// `RESCIND_AUDIT_ACK_DEADLINE_SECONDS`.
        public var ackDeadline: Duration = .seconds(300)
        /// How often deadlines are checked and gauges refreshed; `RESCIND_AUDIT_SCAN_INTERVAL_MS`.
        public var scanInterval: Duration = .seconds(1)
        /// An ack whose revocation event never arrives is rejected after;
        /// `RESCIND_AUDIT_PENDING_ACK_TTL_SECONDS`.
        public var pendingAckLifetime: Duration = .seconds(3600)
        /// Stream events older than this are deleted (SSE resume window);
        /// `RESCIND_AUDIT_STREAM_RETENTION_SECONDS`.
        public var streamRetention: Duration = .seconds(86_400)
        /// Commands sent to a device per revocation, the grant service's included: a failed,
        /// overdue or unanswered device is re-issued one until then (1 turns re-issuing off);
        /// `RESCIND_AUDIT_REISSUE_ATTEMPTS`.
        public var reissueAttempts = 3
        /// Wait before the first re-issue, doubled for each one after;
        /// `RESCIND_AUDIT_REISSUE_BACKOFF_SECONDS`.
        public var reissueBackoff: Duration = .seconds(60)
        /// Acks held (unverified, before their revocation event) per claimed device; one more
        /// evicts that device's oldest (those a known key of the device verifies last);
        /// `RESCIND_AUDIT_HELD_ACKS_PER_DEVICE`.
        public var heldAcksPerDevice = 16
        /// Acks held in all; one more evicts the oldest (unverified first);
        /// `RESCIND_AUDIT_HELD_ACKS_MAX`. Each is at most `HeldAcks.maxEnvelopeBytes`.
        public var heldAcksMax = 10_000
    }

    /// How much of what it refuses the service keeps. Every rejection is counted (per hour,
    /// topic, partition and reason) and shown in `/metrics`; the rows and bodies are bounded,
    /// because anyone who can write to a topic decides how many rejections there are.
    public struct Quarantine: Sendable {
        /// Rejected messages and their hourly counts older than this are deleted by the janitor;
        /// `RESCIND_AUDIT_REJECTION_RETENTION_DAYS`.
        public var retention: Duration = .seconds(14 * 86_400)
        /// Rows stored per clock hour, topic, partition and reason; beyond, only counted;
        /// `RESCIND_AUDIT_REJECTIONS_PER_HOUR`.
        public var rowsPerHour = 50
        /// Bytes of message bodies stored per clock hour, topic, partition and reason (each body
        /// is cut to 64 KiB); beyond, rows are stored without their body;
        /// `RESCIND_AUDIT_REJECTED_BYTES_PER_HOUR`.
        public var bytesPerHour = 65_536
        /// How often the janitor prunes; `RESCIND_AUDIT_JANITOR_INTERVAL_SECONDS`.
        public var janitorInterval: Duration = .seconds(60)
        public init() {}
    }

    public struct Notifications: Sendable {
        /// Fallback poll of the notification outbox; `RESCIND_AUDIT_OUTBOX_POLL_MS`.
        public var pollInterval: Duration = .seconds(2)
        /// Rows claimed and published per relay batch; `RESCIND_AUDIT_OUTBOX_BATCH_SIZE`.
        public var batchSize = 200
        /// How long a claimed batch stays out of other replicas' reach when its relay neither
        /// marks nor releases it (a crash); must exceed the producer's message timeout (60 s);
        /// `RESCIND_AUDIT_OUTBOX_CLAIM_LEASE_SECONDS`.
        public var claimLease: Duration = .seconds(90)
    }

    /// Who may read the monitoring API, the event stream and the page's data, and how
    /// many streams one replica serves.
    public struct Monitoring: Sendable {
        /// File holding the operator's bearer token (at least 32 characters, mode 0600);
        /// `RESCIND_AUDIT_OPERATOR_TOKEN_FILE`. Unset: no operator credential, only owners'
        /// grant-service tokens (which see their own family members) are accepted.
        public var operatorTokenFile: String?
        /// Concurrent `GET /v1/events` streams per replica; one more is answered 503;
        /// `RESCIND_AUDIT_MAX_STREAMS`.
        public var maxStreams = 64
        /// Events buffered for one stream; a reader that falls this far behind is
        /// disconnected (it resumes with `Last-Event-ID`); `RESCIND_AUDIT_STREAM_BUFFER_EVENTS`.
        public var streamBufferEvents = 1000
        /// A comment line on every idle stream this often, so dead connections are noticed
        /// (and their slot freed); `RESCIND_AUDIT_STREAM_HEARTBEAT_MS`.
        public var streamHeartbeat: Duration = .seconds(15)
        /// A connection whose client takes nothing of what was written for this long (the
        /// socket and NIO's buffer full) is closed: a stalled stream reader is disconnected;
        /// `RESCIND_AUDIT_STALLED_READER_MS`.
        public var stalledReaderTimeout: Duration = .seconds(30)
    }

    public var http = HTTP()
    public var monitoring = Monitoring()
    public var database = Database()
    public var kafka = Kafka()
    public var grantService = GrantService()
    public var tracking = Tracking()
    public var notifications = Notifications()
    public var quarantine = Quarantine()
    /// File holding the 32-byte Ed25519 seed that signs notifications and audit entries;
    /// `RESCIND_AUDIT_SIGNING_KEY_FILE`.
    public var signingKeyFile = ".stack/keys/audit-service.key"
    /// Create the signing key file when missing (development only); `RESCIND_AUDIT_CREATE_SIGNING_KEY`.
    public var createSigningKeyIfMissing = false
    /// `RESCIND_LOG_LEVEL` (trace … critical).
    public var logLevel = "info"
    /// How long graceful shutdown may take before the process gives up and exits with
    /// `ShutdownDeadline.exitStatus`; `RESCIND_SHUTDOWN_GRACE_SECONDS`, default 25 (under
    /// Kubernetes' 30 s `terminationGracePeriodSeconds`).
    public var shutdownGrace: Duration = .seconds(25)
    /// How often the database and the brokers are probed (`rescind_database_up`,
    /// `rescind_broker_up`) and the consumer's lag in messages is asked; `RESCIND_PROBE_INTERVAL_SECONDS`.
    public var probeInterval: Duration = .seconds(15)

    public init() {}

    /// Reads every `RESCIND_*` variable the audit service knows; unset ones keep their defaults.
    /// - Throws: `ConfigurationError` naming the variable whose value is unusable.
    public init(environment: [String: String]) throws {
        var reader = EnvironmentReader(environment)
        http.host = reader.string("RESCIND_AUDIT_HOST", default: http.host)
        http.port = try reader.int("RESCIND_AUDIT_PORT", default: http.port, range: 0...65_535)
        http.metricsPort = try reader.metricsPort("RESCIND_AUDIT_METRICS_PORT", mainPort: http.port, mainVariable: "RESCIND_AUDIT_PORT")
        http.tls = try reader.serverTLS(certificate: "RESCIND_AUDIT_TLS_CERT_FILE", key: "RESCIND_AUDIT_TLS_KEY_FILE")
        database.url = reader.string("RESCIND_DATABASE_URL", default: database.url)
        database.schema = try reader.identifier("RESCIND_AUDIT_DB_SCHEMA", default: database.schema)
        database.poolSize = try reader.int("RESCIND_AUDIT_DB_POOL_SIZE", default: database.poolSize, range: 2...200)
        database.migrateOnStart = try reader.bool("RESCIND_AUDIT_MIGRATE", default: database.migrateOnStart)
        database.migrationsDirectory = reader.string("RESCIND_AUDIT_MIGRATIONS_DIR", default: database.migrationsDirectory)
        database.callTimeout = .seconds(
            try reader.int("RESCIND_DATABASE_TIMEOUT_SECONDS", default: database.callTimeout.wholeSeconds, range: 1...3600))
        kafka.bootstrapServers = reader.string("RESCIND_KAFKA_BOOTSTRAP_SERVERS", default: kafka.bootstrapServers)
        kafka.topicPrefix = reader.string("RESCIND_TOPIC_PREFIX", default: kafka.topicPrefix)
        kafka.checkTopics = !(try reader.bool("RESCIND_KAFKA_TOPICS_AUTO_CREATED", default: !kafka.checkTopics))
        kafka.consumerGroup = reader.string("RESCIND_AUDIT_CONSUMER_GROUP", default: kafka.consumerGroup)
        kafka.sessionTimeout = .milliseconds(
            try reader.int("RESCIND_AUDIT_KAFKA_SESSION_TIMEOUT_MS", default: 45_000, range: 1000...3_600_000))
        kafka.heartbeatInterval = .milliseconds(
            try reader.int("RESCIND_AUDIT_KAFKA_HEARTBEAT_MS", default: 3000, range: 100...3_600_000))
        if let fetchWait = try reader.optionalInt("RESCIND_KAFKA_FETCH_WAIT_MS", range: 0...10_000) {
            kafka.consumerProperties["fetch.wait.max.ms"] = String(fetchWait)
        }
        let kafkaSecurity = try reader.kafkaSecurity()
        kafka.consumerProperties.merge(kafkaSecurity) { $1 }
        kafka.producerProperties.merge(kafkaSecurity) { $1 }
        grantService.publicKey = reader.optionalString("RESCIND_GRANT_SERVICE_PUBLIC_KEY")
        if grantService.publicKey == nil, let path = reader.optionalString("RESCIND_GRANT_SERVICE_PUBLIC_KEY_FILE") {
            grantService.publicKey = try Self.publicKey(fromFile: path, variable: "RESCIND_GRANT_SERVICE_PUBLIC_KEY_FILE")
        }
        grantService.url = reader.optionalString("RESCIND_GRANT_SERVICE_URL")
        grantService.tls = try reader.clientTLS(ca: "RESCIND_CA_FILE", plainHTTP: "RESCIND_ALLOW_PLAIN_HTTP")
        if let text = grantService.url {
            guard let url = URL(string: text) else {
                throw ConfigurationError(variable: "RESCIND_GRANT_SERVICE_URL", problem: "expected the grant service's https URL")
            }
            do {
                try grantService.tls.check(url)
            } catch {
                throw ConfigurationError(variable: "RESCIND_GRANT_SERVICE_URL", problem: "\(error)")
            }
        }
        tracking.ackDeadline = try reader.seconds("RESCIND_AUDIT_ACK_DEADLINE_SECONDS", default: tracking.ackDeadline)
        tracking.scanInterval = .milliseconds(
            try reader.int("RESCIND_AUDIT_SCAN_INTERVAL_MS", default: 1000, range: 50...600_000))
        tracking.pendingAckLifetime = try reader.seconds(
            "RESCIND_AUDIT_PENDING_ACK_TTL_SECONDS", default: tracking.pendingAckLifetime)
        tracking.streamRetention = try reader.seconds(
            "RESCIND_AUDIT_STREAM_RETENTION_SECONDS", default: tracking.streamRetention)
        tracking.reissueAttempts = try reader.int(
            "RESCIND_AUDIT_REISSUE_ATTEMPTS", default: tracking.reissueAttempts, range: 1...100)
        tracking.reissueBackoff = try reader.seconds("RESCIND_AUDIT_REISSUE_BACKOFF_SECONDS", default: tracking.reissueBackoff)
        tracking.heldAcksPerDevice = try reader.int(
            "RESCIND_AUDIT_HELD_ACKS_PER_DEVICE", default: tracking.heldAcksPerDevice, range: 1...10_000)
        tracking.heldAcksMax = try reader.int(
            "RESCIND_AUDIT_HELD_ACKS_MAX", default: tracking.heldAcksMax, range: 1...10_000_000)
        quarantine.retention = .seconds(
            86_400 * (try reader.int("RESCIND_AUDIT_REJECTION_RETENTION_DAYS", default: 14, range: 1...36_500)))
        quarantine.rowsPerHour = try reader.int(
            "RESCIND_AUDIT_REJECTIONS_PER_HOUR", default: quarantine.rowsPerHour, range: 0...10_000_000)
        quarantine.bytesPerHour = try reader.int(
            "RESCIND_AUDIT_REJECTED_BYTES_PER_HOUR", default: quarantine.bytesPerHour, range: 0...Int(Int32.max))
        quarantine.janitorInterval = try reader.seconds(
            "RESCIND_AUDIT_JANITOR_INTERVAL_SECONDS", default: quarantine.janitorInterval)
        notifications.pollInterval = .milliseconds(
            try reader.int("RESCIND_AUDIT_OUTBOX_POLL_MS", default: 2000, range: 10...600_000))
        notifications.batchSize = try reader.int(
            "RESCIND_AUDIT_OUTBOX_BATCH_SIZE", default: notifications.batchSize, range: 1...10_000)
        notifications.claimLease = try reader.seconds(
            "RESCIND_AUDIT_OUTBOX_CLAIM_LEASE_SECONDS", default: notifications.claimLease)
        monitoring.operatorTokenFile = reader.optionalString("RESCIND_AUDIT_OPERATOR_TOKEN_FILE")
        http.maxInFlight = try reader.int("RESCIND_AUDIT_MAX_IN_FLIGHT", default: http.maxInFlight, range: 1...100_000)
        monitoring.maxStreams = try reader.int("RESCIND_AUDIT_MAX_STREAMS", default: monitoring.maxStreams, range: 1...100_000)
        monitoring.streamBufferEvents = try reader.int(
            "RESCIND_AUDIT_STREAM_BUFFER_EVENTS", default: monitoring.streamBufferEvents, range: 10...1_000_000)
        monitoring.streamHeartbeat = .milliseconds(
            try reader.int("RESCIND_AUDIT_STREAM_HEARTBEAT_MS", default: 15_000, range: 100...600_000))
        monitoring.stalledReaderTimeout = .milliseconds(
            try reader.int("RESCIND_AUDIT_STALLED_READER_MS", default: 30_000, range: 100...3_600_000))
        signingKeyFile = reader.string("RESCIND_AUDIT_SIGNING_KEY_FILE", default: signingKeyFile)
        createSigningKeyIfMissing = try reader.bool("RESCIND_AUDIT_CREATE_SIGNING_KEY", default: createSigningKeyIfMissing)
        logLevel = reader.string("RESCIND_LOG_LEVEL", default: logLevel)
        shutdownGrace = try reader.seconds("RESCIND_SHUTDOWN_GRACE_SECONDS", default: shutdownGrace)
        probeInterval = .seconds(try reader.int("RESCIND_PROBE_INTERVAL_SECONDS", default: 15, range: 1...3600))
        if grantService.publicKey == nil && grantService.url == nil {
            throw ConfigurationError(
                variable: "RESCIND_GRANT_SERVICE_PUBLIC_KEY",
                problem: "set it (base64 Ed25519 key) or RESCIND_GRANT_SERVICE_URL to fetch it at start")
        }
    }

    /// The base64 text of a key file holding the 32 raw bytes or their base64.
    static func publicKey(fromFile path: String, variable: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError(variable: variable, problem: "the file cannot be read")
        }
        if data.count == 32 { return data.base64EncodedString() }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let decoded = Data(base64Encoded: text), decoded.count == 32 else {
            throw ConfigurationError(variable: variable, problem: "expected a 32-byte Ed25519 public key (raw or base64)")
        }
        return text
    }
}
