import Foundation
import RescindConfiguration
import RescindObservability
import RescindServiceSupport
import RescindTLS

/// Everything the grant service can be told, with the defaults it runs with.
/// Filled from environment variables in `init(environment:)` only.
public struct GrantServiceConfiguration: ServiceProcessConfiguration {
    public struct HTTP: Sendable {
        static let defaultMaxBodyBytes = 1 << 20
        /// Address to bind; `RESCIND_GRANT_HOST`.
        public var host = "127.0.0.1"
        /// Port to bind, 0 for any free port; `RESCIND_GRANT_PORT`.
        public var port = 8080
        /// A port of its own for `/metrics` (same address, same TLS), so that a network policy,
        /// which admits by port and not by path, can open it to the scraper alone; the main port
        /// then answers 404 there. `nil` (unset): `/metrics` on the main port; 0: any free port;
        /// `RESCIND_GRANT_METRICS_PORT`.
        public var metricsPort: Int?
        /// Body limit of ordinary requests; `RESCIND_GRANT_MAX_BODY_BYTES`.
        public var maxBodyBytes = defaultMaxBodyBytes
        /// Body limit of a revocation upload batch; `RESCIND_GRANT_MAX_UPLOAD_BYTES`.
        public var maxUploadBytes = 32 << 20
        /// Certificate chain and key (PEM) to serve HTTPS with; `RESCIND_GRANT_TLS_CERT_FILE` and
        /// `RESCIND_GRANT_TLS_KEY_FILE`, both or neither. `nil`: plain HTTP.
        public var tls: ServerTLS?
    }

    public struct Database: Sendable {
        /// libpq connection URL; `RESCIND_DATABASE_URL`.
        public var url = "postgres://rescind:rescind@127.0.0.1:54329/rescind"
        /// The service's own schema; `RESCIND_GRANT_DB_SCHEMA`.
        public var schema = "grant_service"
        /// Connections in the pool; `RESCIND_GRANT_DB_POOL_SIZE`.
        public var poolSize = 8
        /// Apply pending migrations at start; `RESCIND_GRANT_MIGRATE` (`true`/`false`).
        public var migrateOnStart = true
        /// Directory of the schema's `*.sql` migrations; `RESCIND_GRANT_MIGRATIONS_DIR`.
        public var migrationsDirectory = "migrations/grant"
        /// The longest one database call (a statement, a COPY chunk, a wait for a pooled
        /// connection) waits for an answer; past it the request answers 503
        /// `database_unavailable` and the connection is closed; `RESCIND_DATABASE_TIMEOUT_SECONDS`.
        public var callTimeout: Duration = .seconds(5)
    }

    public struct Kafka: Sendable {
        /// Comma-separated bootstrap servers; `RESCIND_KAFKA_BOOTSTRAP_SERVERS`.
        public var bootstrapServers = "127.0.0.1:9092"
        /// Prepended to every topic name (isolates tenants and tests); `RESCIND_TOPIC_PREFIX`.
        public var topicPrefix = ""
        /// Raw librdkafka properties of the outbox producer: TLS and SASL from the shared
        /// `RESCIND_KAFKA_SECURITY_PROTOCOL`, `RESCIND_KAFKA_SSL_*` and `RESCIND_KAFKA_SASL_*`.
        public var producerProperties: [String: String] = [:]
        /// `/ready` answers 503 until the topics the service publishes to exist (they are
        /// provisioned by `rescind-admin migrate kafka`); false when `RESCIND_KAFKA_TOPICS_AUTO_CREATED=true`
        /// (a broker that creates topics on first use, as the development broker does).
        public var checkTopics = true
    }

    public struct Lifetimes: Sendable {
        /// Bearer token lifetime; `RESCIND_TOKEN_TTL_SECONDS`.
        public var token: Duration = .seconds(900)
        /// Time to answer an authentication challenge; `RESCIND_CHALLENGE_TTL_SECONDS`.
        public var challenge: Duration = .seconds(120)
        /// An unfinished revocation is discarded after; `RESCIND_STAGING_TTL_SECONDS`.
        public var staging: Duration = .seconds(3600)
        /// Revoked grants are hard-deleted after; `RESCIND_GRANT_RETENTION_DAYS`.
        public var revokedGrantRetention: Duration = .seconds(30 * 86_400)
        /// The signed commands kept for devices to fetch at check-in (`device_commands`) are
        /// deleted after; `RESCIND_GRANT_DEVICE_COMMAND_RETENTION_DAYS` (at least 1). Far longer
        /// than the audit service's re-issues (minutes to hours); a device offline for longer
        /// still converges by its version check, but cannot answer those commands.
        public var deviceCommandRetention: Duration = .seconds(90 * 86_400)
        /// A record deleted or overwritten stays restorable by its family member's owner for this
        /// long, then the janitor deletes it; `RESCIND_GRANT_RECORD_VERSION_RETENTION_DAYS` (at least 1).
        public var recordVersionRetention: Duration = .seconds(30 * 86_400)
        /// How often expired state is cleaned up; `RESCIND_JANITOR_INTERVAL_SECONDS`.
        public var janitorInterval: Duration = .seconds(60)
        /// How long an operation that changes who a user is (an identity rotation begun from
        /// one device) waits for a veto before it takes effect, unless a second device or the
        /// recovery key approves it; `RESCIND_SECURITY_DELAY_SECONDS`, never below one hour
        /// (clients refuse a shorter one): a thief must not outrun the owner's other devices.
        public var securityDelay: Duration = .seconds(86_400)
        public static let minimumSecurityDelay: Duration = .seconds(3600)
    }

    public struct Outbox: Sendable {
        /// Rows claimed and published per relay batch; `RESCIND_OUTBOX_BATCH_SIZE`.
        public var batchSize = 500
        /// Fallback poll when no notification arrives; `RESCIND_OUTBOX_POLL_MS`.
        public var pollInterval: Duration = .seconds(2)
        /// How long a claimed batch stays out of other replicas' reach when its relay neither
        /// marks nor releases it (a crash); must exceed the producer's message timeout (60 s),
        /// or a slow but live relay's batch is sent twice; `RESCIND_OUTBOX_CLAIM_LEASE_SECONDS`.
        public var claimLease: Duration = .seconds(90)
    }

    /// What one source address, one device or everyone together may ask for, per instance
    /// (429 `rate_limited` with `Retry-After` beyond), and how many requests are handled at once
    /// (503 `overloaded` beyond). Each `…PerMinute` variable sets a budget earned back over a
    /// minute (an anonymous one grants `burstSeconds` of it at once, the others a whole minute's);
    /// `0` refuses every such request. The per-address and per-device defaults are far above what
    /// honest clients ask for (a device signs in cold at most once per token lifetime and renews
    /// in its own lane), so that many devices behind one address (a household's NAT, a test
    /// suite on loopback) never meet them; the budgets of every address together bound what a
    /// flood from many addresses makes the service do.
    public struct Limits: Sendable {
        public typealias Rate = RateLimiter.Rate
        /// Registrations (`POST /v1/users`) per source address; `RESCIND_GRANT_REGISTRATIONS_PER_ADDRESS_PER_MINUTE`.
        public var registrationsPerAddress = Rate.perMinute(300, burstSeconds: Self.defaultBurstSeconds)
        /// Registrations from every address together; `RESCIND_GRANT_REGISTRATIONS_PER_MINUTE`.
        public var registrations = Rate.perMinute(3000, burstSeconds: Self.defaultBurstSeconds)
        /// Authentication challenges per source address; `RESCIND_GRANT_CHALLENGES_PER_ADDRESS_PER_MINUTE`.
        public var challengesPerAddress = Rate.perMinute(1200, burstSeconds: Self.defaultBurstSeconds)
        /// Anonymous authentication challenges from every address together (renewals, sent with a
        /// live token, spend their device's budget instead); `RESCIND_GRANT_CHALLENGES_PER_MINUTE`.
        public var challenges = Rate.perMinute(1200, burstSeconds: Self.defaultBurstSeconds)
        /// Token requests (answers to challenges) per source address; `RESCIND_GRANT_TOKENS_PER_ADDRESS_PER_MINUTE`.
        public var tokensPerAddress = Rate.perMinute(1200, burstSeconds: Self.defaultBurstSeconds)
        /// Anonymous token requests from every address together; `RESCIND_GRANT_TOKENS_PER_MINUTE`.
        public var tokens = Rate.perMinute(1200, burstSeconds: Self.defaultBurstSeconds)
        /// Enrolments (`POST /v1/enrolment-challenges`, `POST /v1/devices`) and recovery-key orders
        /// (`/v1/recovery/*`) per source address; `RESCIND_GRANT_ENROLMENTS_PER_ADDRESS_PER_MINUTE`.
        public var enrolmentsPerAddress = Rate.perMinute(600, burstSeconds: Self.defaultBurstSeconds)
        /// Identity operations of one device (enrolment, retirement, identity rotation, invitations);
        /// `RESCIND_GRANT_IDENTITY_OPERATIONS_PER_DEVICE_PER_MINUTE`.
        public var identityOperationsPerDevice = Rate.perMinute(300)
        /// Identity operations of all of one user's devices together;
        /// `RESCIND_GRANT_IDENTITY_OPERATIONS_PER_USER_PER_MINUTE`.
        public var identityOperationsPerUser = Rate.perMinute(600)
        /// Every other authenticated request of one device (keys, change feed, records, revocations):
        /// its fair share; `RESCIND_GRANT_REQUESTS_PER_DEVICE_PER_MINUTE`.
        public var requestsPerDevice = Rate.perMinute(12_000)
        /// Authentication challenges kept open per device: a new one past it replaces the oldest
        /// (expired ones are purged first), so an anonymous flood for one device id stores at most
        /// this many rows and cannot lock the device out; `RESCIND_GRANT_OPEN_CHALLENGES_PER_DEVICE`.
        public var openChallengesPerDevice = 16
        /// Requests handled at once; `RESCIND_GRANT_MAX_IN_FLIGHT`.
        public var maxInFlight = 512
        /// Of those, requests without credentials (the ones with a per-address budget:
        /// registration, challenge, token, enrolment, recovery order; not renewals) handled at
        /// once; one more is answered 503 `overloaded` with `Retry-After` before its body is
        /// read, so an anonymous flood from however many addresses never holds more than this
        /// many places, nor database connections, that authenticated devices need; `nil`: half
        /// the database pool (`anonymousInFlightBound`); `RESCIND_GRANT_MAX_ANONYMOUS_IN_FLIGHT`.
        public var maxAnonymousInFlight: Int?
        /// How many seconds of its rate an anonymous budget (registrations, challenges, tokens,
        /// enrolments, per address and in all) grants at once: 10, a sixth of it, the rest earned
        /// back over the minute, so that a flood meets its refusals within seconds instead of
        /// being served a minute's budget first; 60, a whole minute's at once. Applied to the
        /// `…_PER_MINUTE` variables of those budgets when they are read;
        /// `RESCIND_GRANT_BURST_SECONDS`.
        public var burstSeconds = Self.defaultBurstSeconds
        static let defaultBurstSeconds = 10
        /// Peers (reverse proxies, load balancers) whose `X-Forwarded-For` names the client: the
        /// last address in it is the source a limit counts. Any other peer is counted as itself,
        /// whatever it sends; `RESCIND_GRANT_TRUSTED_PROXIES` (comma-separated IP addresses).
        public var trustedProxies: Set<String> = []
    }

    public var http = HTTP()
    public var limits = Limits()
    public var database = Database()
    public var kafka = Kafka()
    public var lifetimes = Lifetimes()
    public var outbox = Outbox()
    /// File holding the 32-byte Ed25519 seed that signs every Kafka message; `RESCIND_GRANT_SIGNING_KEY_FILE`.
    public var signingKeyFile = ".stack/keys/grant-service.key"
    /// Create the signing key file when it does not exist (development only);
    /// `RESCIND_GRANT_CREATE_SIGNING_KEY`.
    public var createSigningKeyIfMissing = false
    /// `RESCIND_LOG_LEVEL` (trace … critical).
    public var logLevel = "info"
    /// How long graceful shutdown may take before the process gives up and exits with
    /// `ShutdownDeadline.exitStatus`; `RESCIND_SHUTDOWN_GRACE_SECONDS`, default 25 (under
    /// Kubernetes' 30 s `terminationGracePeriodSeconds`).
    public var shutdownGrace: Duration = .seconds(25)
    /// How often the database and the brokers are probed (`rescind_database_up`,
    /// `rescind_broker_up`); `RESCIND_PROBE_INTERVAL_SECONDS`.
    public var probeInterval: Duration = .seconds(15)

    public init() {}

    /// `limits.maxAnonymousInFlight`, or half the database pool (at least one): the other half
    /// is always left to authenticated devices, whatever the anonymous requests wait for.
    public var anonymousInFlightBound: Int { limits.maxAnonymousInFlight ?? max(1, database.poolSize / 2) }

    /// Reads every `RESCIND_*` variable the grant service knows; unset ones keep their defaults.
    /// - Throws: `ConfigurationError` naming the variable whose value is unusable.
    public init(environment: [String: String]) throws {
        var reader = EnvironmentReader(environment)
        http.host = reader.string("RESCIND_GRANT_HOST", default: http.host)
        http.port = try reader.int("RESCIND_GRANT_PORT", default: http.port, range: 0...65_535)
        http.metricsPort = try reader.metricsPort("RESCIND_GRANT_METRICS_PORT", mainPort: http.port, mainVariable: "RESCIND_GRANT_PORT")
        http.maxBodyBytes = try reader.int("RESCIND_GRANT_MAX_BODY_BYTES", default: http.maxBodyBytes, range: 1024...(1 << 30))
        http.maxUploadBytes = try reader.int("RESCIND_GRANT_MAX_UPLOAD_BYTES", default: http.maxUploadBytes, range: 1024...(1 << 30))
        http.tls = try reader.serverTLS(certificate: "RESCIND_GRANT_TLS_CERT_FILE", key: "RESCIND_GRANT_TLS_KEY_FILE")
        try readLimits(&reader)
        database.url = reader.string("RESCIND_DATABASE_URL", default: database.url)
        database.schema = try reader.identifier("RESCIND_GRANT_DB_SCHEMA", default: database.schema)
        database.poolSize = try reader.int("RESCIND_GRANT_DB_POOL_SIZE", default: database.poolSize, range: 1...200)
        database.migrateOnStart = try reader.bool("RESCIND_GRANT_MIGRATE", default: database.migrateOnStart)
        database.migrationsDirectory = reader.string("RESCIND_GRANT_MIGRATIONS_DIR", default: database.migrationsDirectory)
        database.callTimeout = .seconds(
            try reader.int("RESCIND_DATABASE_TIMEOUT_SECONDS", default: database.callTimeout.wholeSeconds, range: 1...3600))
        kafka.bootstrapServers = reader.string("RESCIND_KAFKA_BOOTSTRAP_SERVERS", default: kafka.bootstrapServers)
        kafka.topicPrefix = reader.string("RESCIND_TOPIC_PREFIX", default: kafka.topicPrefix)
        kafka.producerProperties = try reader.kafkaSecurity()
        kafka.checkTopics = !(try reader.bool("RESCIND_KAFKA_TOPICS_AUTO_CREATED", default: !kafka.checkTopics))
        lifetimes.token = try reader.seconds("RESCIND_TOKEN_TTL_SECONDS", default: lifetimes.token)
        lifetimes.challenge = try reader.seconds("RESCIND_CHALLENGE_TTL_SECONDS", default: lifetimes.challenge)
        lifetimes.staging = try reader.seconds("RESCIND_STAGING_TTL_SECONDS", default: lifetimes.staging)
        lifetimes.revokedGrantRetention = .seconds(
            86_400 * (try reader.int("RESCIND_GRANT_RETENTION_DAYS", default: 30, range: 0...3650)))
        lifetimes.deviceCommandRetention = .seconds(
            86_400 * (try reader.int("RESCIND_GRANT_DEVICE_COMMAND_RETENTION_DAYS", default: 90, range: 1...3650)))
        lifetimes.recordVersionRetention = .seconds(
            86_400 * (try reader.int("RESCIND_GRANT_RECORD_VERSION_RETENTION_DAYS", default: 30, range: 1...3650)))
        lifetimes.janitorInterval = try reader.seconds("RESCIND_JANITOR_INTERVAL_SECONDS", default: lifetimes.janitorInterval)
        lifetimes.securityDelay = .seconds(
            try reader.int(
                "RESCIND_SECURITY_DELAY_SECONDS", default: lifetimes.securityDelay.wholeSeconds,
                range: Lifetimes.minimumSecurityDelay.wholeSeconds...(30 * 86_400)))
        outbox.batchSize = try reader.int("RESCIND_OUTBOX_BATCH_SIZE", default: outbox.batchSize, range: 1...10_000)
        outbox.pollInterval = .milliseconds(
            try reader.int("RESCIND_OUTBOX_POLL_MS", default: 2000, range: 10...600_000))
        outbox.claimLease = try reader.seconds("RESCIND_OUTBOX_CLAIM_LEASE_SECONDS", default: outbox.claimLease)
        signingKeyFile = reader.string("RESCIND_GRANT_SIGNING_KEY_FILE", default: signingKeyFile)
        createSigningKeyIfMissing = try reader.bool("RESCIND_GRANT_CREATE_SIGNING_KEY", default: createSigningKeyIfMissing)
        logLevel = reader.string("RESCIND_LOG_LEVEL", default: logLevel)
        shutdownGrace = try reader.seconds("RESCIND_SHUTDOWN_GRACE_SECONDS", default: shutdownGrace)
        probeInterval = .seconds(try reader.int("RESCIND_PROBE_INTERVAL_SECONDS", default: 15, range: 1...3600))
    }
}

extension GrantServiceConfiguration {
    fileprivate mutating func readLimits(_ reader: inout EnvironmentReader) throws {
        func rate(_ name: String, _ current: Limits.Rate) throws -> Limits.Rate {
            .perMinute(try reader.int(name, default: Int(current.perMinute), range: 0...10_000_000))
        }
        limits.burstSeconds = try reader.int("RESCIND_GRANT_BURST_SECONDS", default: limits.burstSeconds, range: 1...60)
        func anonymousRate(_ name: String, _ current: Limits.Rate) throws -> Limits.Rate {
            .perMinute(try reader.int(name, default: Int(current.perMinute), range: 0...10_000_000), burstSeconds: limits.burstSeconds)
        }
        limits.registrationsPerAddress = try anonymousRate(
            "RESCIND_GRANT_REGISTRATIONS_PER_ADDRESS_PER_MINUTE", limits.registrationsPerAddress)
        limits.registrations = try anonymousRate("RESCIND_GRANT_REGISTRATIONS_PER_MINUTE", limits.registrations)
        limits.challengesPerAddress = try anonymousRate("RESCIND_GRANT_CHALLENGES_PER_ADDRESS_PER_MINUTE", limits.challengesPerAddress)
        limits.challenges = try anonymousRate("RESCIND_GRANT_CHALLENGES_PER_MINUTE", limits.challenges)
        limits.tokensPerAddress = try anonymousRate("RESCIND_GRANT_TOKENS_PER_ADDRESS_PER_MINUTE", limits.tokensPerAddress)
        limits.tokens = try anonymousRate("RESCIND_GRANT_TOKENS_PER_MINUTE", limits.tokens)
        limits.enrolmentsPerAddress = try anonymousRate("RESCIND_GRANT_ENROLMENTS_PER_ADDRESS_PER_MINUTE", limits.enrolmentsPerAddress)
        limits.identityOperationsPerDevice = try rate(
            "RESCIND_GRANT_IDENTITY_OPERATIONS_PER_DEVICE_PER_MINUTE", limits.identityOperationsPerDevice)
        limits.identityOperationsPerUser = try rate(
            "RESCIND_GRANT_IDENTITY_OPERATIONS_PER_USER_PER_MINUTE", limits.identityOperationsPerUser)
        limits.requestsPerDevice = try rate("RESCIND_GRANT_REQUESTS_PER_DEVICE_PER_MINUTE", limits.requestsPerDevice)
        limits.openChallengesPerDevice = try reader.int(
            "RESCIND_GRANT_OPEN_CHALLENGES_PER_DEVICE", default: limits.openChallengesPerDevice, range: 1...1000)
        limits.maxInFlight = try reader.int("RESCIND_GRANT_MAX_IN_FLIGHT", default: limits.maxInFlight, range: 1...100_000)
        limits.maxAnonymousInFlight = try reader.optionalInt("RESCIND_GRANT_MAX_ANONYMOUS_IN_FLIGHT", range: 1...100_000)
        let proxies = reader.string("RESCIND_GRANT_TRUSTED_PROXIES", default: "")
        limits.trustedProxies = try Set(
            proxies.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.map {
                guard let address = ClientAddress.normalized($0) else {
                    throw ConfigurationError(variable: "RESCIND_GRANT_TRUSTED_PROXIES", problem: "expected comma-separated IP addresses")
                }
                return address
            })
    }
}
