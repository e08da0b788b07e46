import Foundation
import Testing
import Yams

/// `deploy/` cannot run here (no container engine), so it is kept honest by
/// checking it against the code: every setting it passes is one a program reads,
/// and every manifest parses.
@Suite struct DeploymentTests {
    static let deploy = ModuleGraphTests.root.appendingPathComponent("deploy")

    static func files(withExtensions extensions: Set<String>) -> [URL] {
        FileManager.default.enumerator(at: deploy, includingPropertiesForKeys: nil)!
            .compactMap { $0 as? URL }
            .filter { extensions.contains($0.pathExtension) || extensions.contains($0.lastPathComponent) }
    }

    /// Every `RESCIND_*` name that appears as a string literal in the sources: what the code reads.
    static func variablesReadByTheCode() throws -> Set<String> {
        let sources = ModuleGraphTests.root.appendingPathComponent("Sources")
        let pattern = try Regex(#""(RESCIND_[A-Z0-9_]+)""#)
        var names: Set<String> = []
        for file in FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)!.compactMap({ $0 as? URL })
        where file.pathExtension == "swift" {
            for match in try String(contentsOf: file, encoding: .utf8).matches(of: pattern) {
                if let name = match.output[1].substring { names.insert(String(name)) }
            }
        }
        return names
    }

    @Test func everyVariableTheDeploymentSetsIsReadByTheCode() throws {
        let known = try Self.variablesReadByTheCode()
        #expect(known.contains("RESCIND_DATABASE_URL") && known.contains("RESCIND_AGENT_DATA_DIR"))
        let pattern = try Regex(#"RESCIND_[A-Z0-9_]+"#)
        let files = Self.files(withExtensions: ["yaml", "Dockerfile"])
        #expect(files.count >= 5)
        var checked = 0
        for file in files {
            for match in try String(contentsOf: file, encoding: .utf8).matches(of: pattern) {
                let name = String(match.output[0].substring!)
                #expect(known.contains(name), "\(file.lastPathComponent) sets \(name), which no program reads")
                checked += 1
            }
        }
        #expect(checked > 20)
    }

    @Test func composeFileParsesAndRunsTheWholeSystem() throws {
        let text = try String(contentsOf: Self.deploy.appendingPathComponent("compose.yaml"), encoding: .utf8)
        let compose = try #require(try Yams.load(yaml: text) as? [String: Any])
        let services = try #require(compose["services"] as? [String: Any])
        for service in ["postgres", "kafka", "migrate", "grant-service", "audit-service", "agent-a-phone", "agent-b-phone"] {
            #expect(services[service] != nil, "compose has no \(service)")
        }
        let kafka = try #require(services["kafka"] as? [String: Any])
        let kafkaEnvironment = try #require(kafka["environment"] as? [String: Any])
        #expect((kafkaEnvironment["KAFKA_PROCESS_ROLES"] as? String)?.contains("controller") == true, "Kafka runs in KRaft mode")
        #expect((services["postgres"] as? [String: Any])?["image"] as? String == "postgres:16")
    }

    /// Issue 15: topics are provisioned like the schema, by a job the services wait for, and the
    /// broker never creates a topic on a client's first use.
    @Test func topicsAreProvisionedByAJobAndTheBrokerCreatesNone() throws {
        let text = try String(contentsOf: Self.deploy.appendingPathComponent("compose.yaml"), encoding: .utf8)
        let compose = try #require(try Yams.load(yaml: text) as? [String: Any])
        let services = try #require(compose["services"] as? [String: Any])
        let kafka = try #require(services["kafka"] as? [String: Any])
        #expect(Self.environment(of: kafka)["KAFKA_AUTO_CREATE_TOPICS_ENABLE"] == "false")
        let job = try #require(services["kafka-topics"] as? [String: Any], "compose has no kafka-topics job")
        #expect("\(job["entrypoint"] ?? "")".contains("migrate") && "\(job["entrypoint"] ?? "")".contains("kafka"))
        #expect(Self.environment(of: job)["RESCIND_KAFKA_TOPIC_PARTITIONS"] != nil)
        for name in ["grant-service", "audit-service"] {
            let service = try #require(services[name] as? [String: Any])
            let dependencies = try #require(service["depends_on"] as? [String: Any])
            let condition = (dependencies["kafka-topics"] as? [String: Any])?["condition"] as? String
            #expect(condition == "service_completed_successfully", "\(name) starts after the topics exist")
        }
        let migrateJob = try String(contentsOf: Self.deploy.appendingPathComponent("k8s/migrate-job.yaml"), encoding: .utf8)
        #expect(migrateJob.contains("rescind-admin migrate kafka") && migrateJob.contains("rescind-common"))
        let common = try String(contentsOf: Self.deploy.appendingPathComponent("k8s/secrets.yaml"), encoding: .utf8)
        #expect(common.contains("RESCIND_KAFKA_TOPIC_REPLICATION_FACTOR: \"3\""))
    }

    @Test func kubernetesManifestsParseAndProbeTheServices() throws {
        let manifests = Self.files(withExtensions: ["yaml"]).filter { $0.path.contains("/k8s/") }
        var kinds: [String] = []
        var probed = 0
        for file in manifests {
            for document in try Yams.load_all(yaml: String(contentsOf: file, encoding: .utf8)) {
                let object = try #require(document as? [String: Any], "\(file.lastPathComponent) holds a non-object document")
                kinds.append(try #require(object["kind"] as? String))
                if object["kind"] as? String == "Deployment" {
                    let text = try Yams.dump(object: object)
                    #expect(text.contains("readinessProbe") && text.contains("livenessProbe") && text.contains("limits"))
                    probed += 1
                }
            }
        }
        #expect(probed == 2)
        for kind in ["Namespace", "Secret", "Job", "Deployment", "Service", "StatefulSet"] {
            #expect(kinds.contains(kind), "no \(kind) in deploy/k8s")
        }
    }

    /// The environment of a compose service, its `<<` merges resolved.
    static func environment(of service: [String: Any]) -> [String: String] {
        var result: [String: String] = [:]
        func add(_ value: Any?) {
            guard let map = value as? [String: Any] else { return }
            if let merged = map["<<"] { add(merged) }
            for (key, value) in map where key != "<<" { result[key] = "\(value)" }
        }
        add(service["environment"])
        return result
    }

    /// TLS on every HTTP hop and to PostgreSQL, and the grant service's key pinned from a file:
    /// no URL in deploy/ is plain HTTP and no component fetches the key.
    @Test func everyHopIsTLSAndTheGrantServiceKeyIsPinned() throws {
        for file in Self.files(withExtensions: ["yaml", "Dockerfile"]) {
            let text = try String(contentsOf: file, encoding: .utf8)
            #expect(!text.contains("http://"), "\(file.lastPathComponent) names a plain-HTTP URL")
        }

        let text = try String(contentsOf: Self.deploy.appendingPathComponent("compose.yaml"), encoding: .utf8)
        let compose = try #require(try Yams.load(yaml: text) as? [String: Any])
        let services = try #require(compose["services"] as? [String: Any])
        func environment(_ name: String) throws -> [String: String] {
            Self.environment(of: try #require(services[name] as? [String: Any], "compose has no \(name)"))
        }
        let grant = try environment("grant-service"), audit = try environment("audit-service")
        #expect(grant["RESCIND_GRANT_TLS_CERT_FILE"] != nil && grant["RESCIND_GRANT_TLS_KEY_FILE"] != nil)
        #expect(audit["RESCIND_AUDIT_TLS_CERT_FILE"] != nil && audit["RESCIND_AUDIT_TLS_KEY_FILE"] != nil)
        #expect(audit["RESCIND_GRANT_SERVICE_PUBLIC_KEY_FILE"] != nil || audit["RESCIND_GRANT_SERVICE_PUBLIC_KEY"] != nil)
        #expect(audit["RESCIND_CA_FILE"] != nil && audit["RESCIND_GRANT_SERVICE_URL"]?.hasPrefix("https://") == true)
        for name in ["migrate", "grant-service", "audit-service"] {
            #expect(try environment(name)["RESCIND_DATABASE_URL"]?.contains("sslmode=verify-full") == true, "\(name)")
        }
        for name in ["agent-a-phone", "agent-b-phone"] {
            let agent = try environment(name)
            #expect(agent["RESCIND_AGENT_GRANT_SERVICE_URL"]?.hasPrefix("https://") == true, "\(name)")
            #expect(agent["RESCIND_AGENT_CA_FILE"] != nil && agent["RESCIND_AGENT_GRANT_SERVICE_KEY_FILE"] != nil, "\(name)")
        }
        let postgres = try #require(services["postgres"] as? [String: Any])
        #expect("\(postgres["entrypoint"] ?? postgres["command"] ?? "")".contains("ssl=on"), "PostgreSQL serves TLS")

        // Kubernetes: both services serve HTTPS and are probed over it; clients hold the CA.
        var served: Set<String> = []
        for file in Self.files(withExtensions: ["yaml"]) where file.path.contains("/k8s/") {
            let manifest = try String(contentsOf: file, encoding: .utf8)
            for document in try Yams.load_all(yaml: manifest) {
                guard let object = document as? [String: Any], ["Deployment", "StatefulSet"].contains(object["kind"] as? String)
                else { continue }
                let dumped = try Yams.dump(object: object)
                if dumped.contains("RESCIND_GRANT_TLS_CERT_FILE") { served.insert("grant") }
                if dumped.contains("RESCIND_AUDIT_TLS_CERT_FILE") {
                    served.insert("audit")
                    #expect(dumped.contains("RESCIND_GRANT_SERVICE_PUBLIC_KEY_FILE"), "the audit service pins the grant key")
                }
                if object["kind"] as? String == "Deployment" {
                    #expect(dumped.contains("scheme: HTTPS"), "\(file.lastPathComponent): probes over HTTPS")
                } else {
                    #expect(dumped.contains("RESCIND_AGENT_CA_FILE"), "\(file.lastPathComponent): the agent checks the CA")
                }
            }
        }
        #expect(served == ["grant", "audit"])
        let secrets = try String(contentsOf: Self.deploy.appendingPathComponent("k8s/secrets.yaml"), encoding: .utf8)
        #expect(secrets.contains("sslmode=verify-full") && secrets.contains("RESCIND_CA_FILE"))
    }
}
