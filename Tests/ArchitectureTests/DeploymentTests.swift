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
}
