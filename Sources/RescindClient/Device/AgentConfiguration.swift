import Foundation
import RescindCrypto
import RescindMacros
import RescindTLS

/// Everything the agent needs to run, filled from the environment in one place
/// (`init(environment:)`) or built directly by tests and the CLI.
public struct AgentConfiguration: Sendable {
    /// Where the master-key-encryption key comes from.
    public enum Unlock: Sendable, CustomStringConvertible {
        /// Argon2id over this passphrase (`RESCIND_AGENT_PASSPHRASE`). The text stays in the
        /// process environment and this value; prefer a passphrase file or a key file, whose
        /// bytes are read straight into memory that is zeroed after use.
        case passphrase(String)
        /// Argon2id over the contents of this 0600 file, trailing newline removed
        /// (`RESCIND_AGENT_PASSPHRASE_FILE`).
        case passphraseFile(String)
        /// Exactly 32 random bytes in this 0600 file, used as the key itself (`RESCIND_AGENT_KEY_FILE`).
        case keyFile(String)

        public var description: String {
            switch self {
            case .passphrase: "passphrase (environment)"
            case .passphraseFile(let path): "passphrase file \(path)"
            case .keyFile(let path): "key file \(path)"
            }
        }
    }

    /// Cost of Argon2id for a keystore created now; an existing keystore keeps the
    /// parameters it was created with.
    @MemberwiseInit
    public struct KeyDerivationCost: Sendable {
        /// Passes over memory; default 3.
        public var opsLimit: UInt64 = Argon2id.Parameters.defaultOpsLimit
        /// Bytes of memory; default 64 MiB.
        public var memLimit: UInt64 = Argon2id.Parameters.defaultMemLimit
    }

    public struct Kafka: Sendable {
        /// `RESCIND_KAFKA_BOOTSTRAP_SERVERS`.
        public var bootstrapServers: String
        /// Prepended to topic names; `RESCIND_TOPIC_PREFIX`.
        public var topicPrefix: String
        /// Group membership timeout; `RESCIND_AGENT_KAFKA_SESSION_TIMEOUT_SECONDS`, default 10 s.
        public var sessionTimeout: Duration = .seconds(10)
        /// Raw librdkafka properties of the command consumer (TLS, SASL, fetch tuning).
        /// `fetch.wait.max.ms` is read from `RESCIND_KAFKA_FETCH_WAIT_MS` (0…10000, unset keeps
        /// librdkafka's 500), for brokers that answer a waiting fetch only when it expires.
        public var consumerProperties: [String: String] = [:]
        /// Raw librdkafka properties of the ack producer (TLS, SASL, batching).
        public var producerProperties: [String: String] = [:]

        public init(bootstrapServers: String, topicPrefix: String = "") {
            self.bootstrapServers = bootstrapServers
            self.topicPrefix = topicPrefix
        }
    }

    /// Holds the keystore and the record cache; created 0700. `RESCIND_AGENT_DATA_DIR`.
    public var dataDirectory: String
    /// `RESCIND_AGENT_GRANT_SERVICE_URL`.
    public var grantServiceURL: URL
    /// How that URL is reached: `RESCIND_AGENT_CA_FILE` (PEM CAs its certificate is checked
    /// against; unset: the system's roots) and `RESCIND_AGENT_ALLOW_PLAIN_HTTP` (`loopback`
    /// allows `http://` to a loopback address; otherwise plain HTTP is refused).
    public var tls = ClientTLS.strict
    /// The only key device commands are accepted from (pinned, never fetched at run time).
    /// `RESCIND_AGENT_GRANT_SERVICE_KEY` (base64) or `RESCIND_AGENT_GRANT_SERVICE_KEY_FILE`.
    public var grantServiceKey: Ed25519.PublicKey
    /// The audit service's Ed25519 public key, pinned: command re-issues must verify with it
    /// (`CommandReissue`); without it they are refused. `RESCIND_AGENT_AUDIT_SERVICE_KEY`
    /// (base64) or `RESCIND_AGENT_AUDIT_SERVICE_KEY_FILE`.
    public var auditServiceKey: Ed25519.PublicKey?
    public var kafka: Kafka
    public var unlock: Unlock
    /// Start without reading any secret (`RESCIND_AGENT_START_LOCKED=true` or `run --locked`):
    /// the agent runs locked until SIGUSR2. Needs a passphrase file or key file as `unlock`,
    /// read at each unlock (it may appear only then, e.g. on removable media).
    public var startLocked = false
    /// Where `run` writes its metrics in the Prometheus text format (`RESCIND_AGENT_METRICS_FILE`);
    /// none when unset.
    public var metricsFile: String?
    /// How often the metrics file is rewritten; `RESCIND_AGENT_METRICS_SECONDS`, default 15.
    public var metricsInterval: Duration = .seconds(15)
    public var keyDerivation = KeyDerivationCost()
    /// How often to compare FMK versions with the grant service; `RESCIND_AGENT_SELF_HEAL_SECONDS`, default 300.
    public var selfHealInterval: Duration = .seconds(300)
    /// First retry delay after a transient failure (doubles up to `selfHealInterval`);
    /// `RESCIND_AGENT_RETRY_SECONDS`, default 2.
    public var retryInterval: Duration = .seconds(2)
    /// How long the ack publisher holds a `delivered` receipt back while its command is still
    /// pending, so that a quick command's receipt leaves in the same produce batch as its ack
    /// (receipt first): one produce and one outbox write per command instead of two, neither
    /// competing with the command's own work. Past it the receipt goes alone, so a command
    /// that waits (grant service unreachable, locked) still shows `delivered` in the audit
    /// service, that much later. Zero sends every receipt at once. Default 2 s.
    public var receiptHold: Duration = .seconds(2)
    /// `RESCIND_AGENT_LOG_LEVEL` (trace … critical), default info.
    public var logLevel: String = "info"
    /// How long the agent process's graceful shutdown may take before it exits with
    /// `ShutdownDeadline.exitStatus`; `RESCIND_AGENT_SHUTDOWN_GRACE_SECONDS`, default 25.
    public var shutdownGrace: Duration = .seconds(25)

    public init(
        dataDirectory: String, grantServiceURL: URL, grantServiceKey: Ed25519.PublicKey, kafka: Kafka, unlock: Unlock
    ) {
        self.dataDirectory = dataDirectory
        self.grantServiceURL = grantServiceURL
        self.grantServiceKey = grantServiceKey
        self.kafka = kafka
        self.unlock = unlock
    }

    package var keystorePath: String { dataDirectory + "/keystore.json" }
    package var databasePath: String { dataDirectory + "/cache.sqlite" }
    /// The verified key histories of this device (`KeyHistoryStore`, 0600).
    package var keyHistoryPath: String { dataDirectory + "/" + KeyHistoryStore.fileName }
    package var identityPinsPath: String { IdentityPins.path(inProfile: dataDirectory) }
    package var commandsTopic: String { kafka.topicPrefix + "device_commands" }
    package var acksTopic: String { kafka.topicPrefix + "device_acks" }
}
