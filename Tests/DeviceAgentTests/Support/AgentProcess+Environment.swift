import Foundation
import RescindClient
import RescindTLS

@testable import DeviceAgent

extension AgentProcess {
    /// The environment an operator would set for `configuration`'s device, with test speeds
    /// (short Kafka session, 1 s retries, cheap Argon2id) and info logs, which the tests
    /// wait for. `unlock` replaces the default `RESCIND_AGENT_PASSPHRASE`.
    static func environment(_ configuration: AgentConfiguration, unlock: [String: String]? = nil) -> [String: String] {
        var environment = [
            "RESCIND_AGENT_DATA_DIR": configuration.dataDirectory,
            "RESCIND_AGENT_GRANT_SERVICE_URL": configuration.grantServiceURL.absoluteString,
            "RESCIND_AGENT_GRANT_SERVICE_KEY": Data(configuration.grantServiceKey.rawRepresentation).base64EncodedString(),
            "RESCIND_KAFKA_BOOTSTRAP_SERVERS": configuration.kafka.bootstrapServers,
            "RESCIND_TOPIC_PREFIX": configuration.kafka.topicPrefix,
            "RESCIND_AGENT_KAFKA_SESSION_TIMEOUT_SECONDS": "3",
            "RESCIND_AGENT_RETRY_SECONDS": "1",
            "RESCIND_AGENT_ARGON2_OPSLIMIT": "1",
            "RESCIND_AGENT_ARGON2_MEMLIMIT_MIB": "8",
            "RESCIND_AGENT_LOG_LEVEL": "info",
        ]
        for (name, value) in unlock ?? ["RESCIND_AGENT_PASSPHRASE": AgentTestKit.passphrase] { environment[name] = value }
        // The Tansu pass loads a newer librdkafka in every process.
        if let library = ProcessInfo.processInfo.environment["LD_LIBRARY_PATH"] { environment["LD_LIBRARY_PATH"] = library }
        // The same TLS policy as the configuration: the suite's CA, or plain HTTP to loopback.
        if let caFile = configuration.tls.caFile { environment["RESCIND_AGENT_CA_FILE"] = caFile }
        if configuration.tls.plainHTTP == .loopback { environment["RESCIND_AGENT_ALLOW_PLAIN_HTTP"] = "loopback" }
        return environment
    }
}
