import Foundation
import RescindClient
import RescindConfiguration
import RescindCrypto
import Testing

@testable import DeviceAgent

@Suite("Agent configuration from the environment")
struct ConfigurationTests {
    let key = Ed25519.PrivateKey().publicKey

    func environment(_ extra: [String: String] = [:]) -> [String: String] {
        [
            "HOME": "/home/device",
            "RESCIND_AGENT_GRANT_SERVICE_URL": "https://grants.example:8443",
            "RESCIND_AGENT_GRANT_SERVICE_KEY": Data(key.rawRepresentation).base64EncodedString(),
            "RESCIND_KAFKA_BOOTSTRAP_SERVERS": "kafka-1:9092,kafka-2:9092",
            "RESCIND_AGENT_PASSPHRASE": "secret words",
        ].merging(extra) { $1 }
    }

    @Test("defaults, the pinned key and the topic names")
    func defaults() throws {
        let configuration = try AgentConfiguration(environment: environment(["RESCIND_TOPIC_PREFIX": "prod."]))
        #expect(configuration.dataDirectory == "/home/device/.rescind-agent")
        #expect(configuration.grantServiceKey == key)
        #expect(configuration.commandsTopic == "prod.device_commands" && configuration.acksTopic == "prod.device_acks")
        #expect(configuration.selfHealInterval == .seconds(300))
        #expect(configuration.keyDerivation.memLimit == 64 << 20)
        // The passphrase never shows in a description of the configuration.
        #expect(!String(describing: configuration).contains("secret words"))
    }

    @Test("RESCIND_KAFKA_FETCH_WAIT_MS sets the command consumer's fetch.wait.max.ms; unset keeps librdkafka's")
    func fetchWait() throws {
        #expect(try AgentConfiguration(environment: environment()).kafka.consumerProperties["fetch.wait.max.ms"] == nil)
        for value in ["0", "25", "10000"] {
            let configuration = try AgentConfiguration(environment: environment(["RESCIND_KAFKA_FETCH_WAIT_MS": value]))
            #expect(configuration.kafka.consumerProperties == ["fetch.wait.max.ms": value])
        }
        for value in ["-1", "10001", "25ms", "fast"] {
            let error = #expect(throws: ConfigurationError.self) {
                try AgentConfiguration(environment: self.environment(["RESCIND_KAFKA_FETCH_WAIT_MS": value]))
            }
            #expect(error?.variable == "RESCIND_KAFKA_FETCH_WAIT_MS", "\(value)")
            #expect(error?.description.contains(value) == false)
        }
    }

    @Test("exactly one unlock source")
    func unlockSources() throws {
        #expect(throws: ConfigurationError.self) {
            try AgentConfiguration(environment: environment(["RESCIND_AGENT_KEY_FILE": "/keys/master.key"]))
        }
        var none = environment()
        none["RESCIND_AGENT_PASSPHRASE"] = nil
        #expect(throws: ConfigurationError.self) { try AgentConfiguration(environment: none) }
        none["RESCIND_AGENT_KEY_FILE"] = "/keys/master.key"
        guard case .keyFile("/keys/master.key") = try AgentConfiguration(environment: none).unlock else {
            Issue.record("key file expected")
            return
        }
    }

    @Test("the pinned key comes raw or base64 from a file, and a bad one names its variable")
    func pinnedKeyFile() async throws {
        try await TemporaryDirectory.with { directory in
            var base = environment()
            base["RESCIND_AGENT_GRANT_SERVICE_KEY"] = nil
            for contents in [Data(key.rawRepresentation), Data((Data(key.rawRepresentation).base64EncodedString() + "\n").utf8)] {
                let path = try directory.write("service-\(contents.count).pub", contents, permissions: 0o644)
                let configuration = try AgentConfiguration(environment: base.merging(["RESCIND_AGENT_GRANT_SERVICE_KEY_FILE": path]) { $1 })
                #expect(configuration.grantServiceKey == key)
            }
            let error = #expect(throws: ConfigurationError.self) {
                try AgentConfiguration(environment: self.environment(["RESCIND_AGENT_GRANT_SERVICE_KEY": "bm90IGEga2V5"]))
            }
            #expect(error?.variable == "RESCIND_AGENT_GRANT_SERVICE_KEY")
        }
    }

    @Test("the grant service over HTTPS checked against RESCIND_AGENT_CA_FILE; plain HTTP only to loopback when allowed")
    func transportSecurity() async throws {
        let strict = try AgentConfiguration(environment: environment())
        #expect(strict.tls.caFile == nil && strict.tls.plainHTTP == .refused)
        for (url, allow) in [("http://127.0.0.1:8080", nil), ("http://grants.example:8080", "loopback"), ("http://10.0.0.5", "loopback")] {
            var extra = ["RESCIND_AGENT_GRANT_SERVICE_URL": url]
            if let allow { extra["RESCIND_AGENT_ALLOW_PLAIN_HTTP"] = allow }
            let error = #expect(throws: ConfigurationError.self) { try AgentConfiguration(environment: self.environment(extra)) }
            #expect(error?.variable == "RESCIND_AGENT_GRANT_SERVICE_URL", "\(url)")
            #expect(error?.description.contains("refusing plain HTTP") == true, "\(url)")
        }
        let loopback = try AgentConfiguration(environment: environment([
            "RESCIND_AGENT_GRANT_SERVICE_URL": "http://localhost:8080", "RESCIND_AGENT_ALLOW_PLAIN_HTTP": "loopback",
        ]))
        #expect(loopback.tls.plainHTTP == .loopback)
        try await TemporaryDirectory.with { directory in
            let notACA = try directory.write("ca.pem", Data("not a certificate".utf8), permissions: 0o644)
            let error = #expect(throws: ConfigurationError.self) {
                try AgentConfiguration(environment: self.environment(["RESCIND_AGENT_CA_FILE": notACA]))
            }
            #expect(error?.variable == "RESCIND_AGENT_CA_FILE")
        }
    }
}
