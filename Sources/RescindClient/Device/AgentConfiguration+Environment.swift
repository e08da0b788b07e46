import Foundation
import RescindConfiguration
import RescindCrypto
import RescindTLS

extension AgentConfiguration {
    /// Reads the `RESCIND_AGENT_*` variables (and the shared Kafka ones).
    /// - Throws: `ConfigurationError` naming the variable that is missing or wrong; values are
    ///   never repeated in the message.
    public init(environment: [String: String]) throws {
        var reader = EnvironmentReader(environment)
        let home = environment["HOME"] ?? "/var/lib"
        let dataDirectory = reader.string("RESCIND_AGENT_DATA_DIR", default: home + "/.rescind-agent")

        guard let urlText = reader.optionalString("RESCIND_AGENT_GRANT_SERVICE_URL"), let url = URL(string: urlText),
            url.scheme == "http" || url.scheme == "https"
        else {
            throw ConfigurationError(variable: "RESCIND_AGENT_GRANT_SERVICE_URL", problem: "expected the grant service's http(s) URL")
        }
        let tls = try reader.clientTLS(ca: "RESCIND_AGENT_CA_FILE", plainHTTP: "RESCIND_AGENT_ALLOW_PLAIN_HTTP")
        do {
            try tls.check(url)
        } catch {
            throw ConfigurationError(variable: "RESCIND_AGENT_GRANT_SERVICE_URL", problem: "\(error)")
        }
        _ = try tls.configuration()
        let key = try Self.pinnedKey(&reader)
        guard let bootstrap = reader.optionalString("RESCIND_KAFKA_BOOTSTRAP_SERVERS") else {
            throw ConfigurationError(variable: "RESCIND_KAFKA_BOOTSTRAP_SERVERS", problem: "expected host:port[,host:port…]")
        }
        var kafka = Kafka(bootstrapServers: bootstrap, topicPrefix: reader.string("RESCIND_TOPIC_PREFIX", default: ""))
        kafka.sessionTimeout = try reader.seconds("RESCIND_AGENT_KAFKA_SESSION_TIMEOUT_SECONDS", default: kafka.sessionTimeout)
        if let fetchWait = try reader.optionalInt("RESCIND_KAFKA_FETCH_WAIT_MS", range: 0...10_000) {
            kafka.consumerProperties["fetch.wait.max.ms"] = String(fetchWait)
        }
        let kafkaSecurity = try reader.kafkaSecurity()
        kafka.consumerProperties.merge(kafkaSecurity) { $1 }
        kafka.producerProperties.merge(kafkaSecurity) { $1 }

        self.init(
            dataDirectory: dataDirectory, grantServiceURL: url, grantServiceKey: key, kafka: kafka,
            unlock: try Self.unlock(&reader))
        self.tls = tls
        if let text = reader.optionalString("RESCIND_AGENT_AUDIT_SERVICE_KEY") {
            auditServiceKey = try Self.parseKey(Array(text.utf8), variable: "RESCIND_AGENT_AUDIT_SERVICE_KEY")
        } else if let path = reader.optionalString("RESCIND_AGENT_AUDIT_SERVICE_KEY_FILE") {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw ConfigurationError(variable: "RESCIND_AGENT_AUDIT_SERVICE_KEY_FILE", problem: "file cannot be read")
            }
            auditServiceKey = try Self.parseKey([UInt8](data), variable: "RESCIND_AGENT_AUDIT_SERVICE_KEY_FILE")
        }
        selfHealInterval = try reader.seconds("RESCIND_AGENT_SELF_HEAL_SECONDS", default: selfHealInterval)
        retryInterval = try reader.seconds("RESCIND_AGENT_RETRY_SECONDS", default: retryInterval)
        keyDerivation.opsLimit = UInt64(try reader.int("RESCIND_AGENT_ARGON2_OPSLIMIT", default: 3, range: 1...32))
        keyDerivation.memLimit = UInt64(try reader.int("RESCIND_AGENT_ARGON2_MEMLIMIT_MIB", default: 64, range: 1...4096)) << 20
        logLevel = reader.string("RESCIND_AGENT_LOG_LEVEL", default: logLevel)
        shutdownGrace = try reader.seconds("RESCIND_AGENT_SHUTDOWN_GRACE_SECONDS", default: shutdownGrace)
        startLocked = try reader.bool("RESCIND_AGENT_START_LOCKED", default: false)
        metricsFile = reader.optionalString("RESCIND_AGENT_METRICS_FILE")
        metricsInterval = try reader.seconds("RESCIND_AGENT_METRICS_SECONDS", default: metricsInterval)
    }

    private static func pinnedKey(_ reader: inout EnvironmentReader) throws -> Ed25519.PublicKey {
        if let text = reader.optionalString("RESCIND_AGENT_GRANT_SERVICE_KEY") {
            return try parseKey(Array(text.utf8), variable: "RESCIND_AGENT_GRANT_SERVICE_KEY")
        }
        guard let path = reader.optionalString("RESCIND_AGENT_GRANT_SERVICE_KEY_FILE") else {
            throw ConfigurationError(
                variable: "RESCIND_AGENT_GRANT_SERVICE_KEY",
                problem: "set it (base64 Ed25519 public key) or RESCIND_AGENT_GRANT_SERVICE_KEY_FILE")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError(variable: "RESCIND_AGENT_GRANT_SERVICE_KEY_FILE", problem: "file cannot be read")
        }
        return try parseKey([UInt8](data), variable: "RESCIND_AGENT_GRANT_SERVICE_KEY_FILE")
    }

    /// 32 raw bytes, or their base64 text.
    package static func parseKey(_ bytes: [UInt8], variable: String) throws -> Ed25519.PublicKey {
        if bytes.count == Ed25519.publicKeyByteCount, let key = try? Ed25519.PublicKey(rawRepresentation: bytes) {
            return key
        }
        let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let decoded = Data(base64Encoded: text), let key = try? Ed25519.PublicKey(rawRepresentation: [UInt8](decoded)) else {
            throw ConfigurationError(variable: variable, problem: "expected a 32-byte Ed25519 public key (raw or base64)")
        }
        return key
    }

    private static func unlock(_ reader: inout EnvironmentReader) throws -> Unlock {
        let sources: [Unlock] = [
            reader.optionalString("RESCIND_AGENT_PASSPHRASE").map(Unlock.passphrase),
            reader.optionalString("RESCIND_AGENT_PASSPHRASE_FILE").map(Unlock.passphraseFile),
            reader.optionalString("RESCIND_AGENT_KEY_FILE").map(Unlock.keyFile),
        ].compactMap { $0 }
        guard sources.count == 1 else {
            throw ConfigurationError(
                variable: "RESCIND_AGENT_PASSPHRASE",
                problem: "set exactly one of RESCIND_AGENT_PASSPHRASE, RESCIND_AGENT_PASSPHRASE_FILE, RESCIND_AGENT_KEY_FILE")
        }
        return sources[0]
    }
}
