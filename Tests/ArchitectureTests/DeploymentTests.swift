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

    /// Topics are provisioned like the schema, by a job the services wait for, and the
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
        let common = try String(contentsOf: Self.deploy.appendingPathComponent("k8s/config.yaml"), encoding: .utf8)
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
                    #expect(text.contains("startupProbe") && text.contains("readinessProbe") && text.contains("livenessProbe"))
                    #expect(text.contains("limits"))
                    probed += 1
                }
            }
        }
        #expect(probed == 2)
        for kind in ["Namespace", "ConfigMap", "Job", "Deployment", "Service", "StatefulSet", "NetworkPolicy", "PodDisruptionBudget"] {
            #expect(kinds.contains(kind), "no \(kind) in deploy/k8s")
        }
        // `kubectl apply -f deploy/k8s` must not overwrite real credentials with placeholders.
        #expect(!kinds.contains("Secret"), "deploy/k8s applies a Secret: keep examples in deploy/k8s-examples")
    }

    /// Every object of every manifest in deploy/k8s, by kind.
    static func kubernetesObjects() throws -> [String: [[String: Any]]] {
        var objects: [String: [[String: Any]]] = [:]
        for file in Self.files(withExtensions: ["yaml"]) where file.path.contains("/k8s/") {
            for document in try Yams.load_all(yaml: String(contentsOf: file, encoding: .utf8)) {
                let object = try #require(document as? [String: Any])
                objects[object["kind"] as? String ?? "", default: []].append(object)
            }
        }
        return objects
    }

    /// Pod Security's `restricted` profile, enforced on the namespace and met by every pod:
    /// non-root uid 10001, RuntimeDefault seccomp, no privilege escalation, no capability, a
    /// read-only root with /tmp writable; Secrets mounted 0440 with fsGroup 10001, which the
    /// services' and agent's secret-file rule accepts (root-owned, nothing for others).
    @Test func everyPodIsHardenedAndReadsItsSecrets() throws {
        let objects = try Self.kubernetesObjects()
        let namespace = try #require(objects["Namespace"]?.first)
        let labels = (namespace["metadata"] as? [String: Any])?["labels"] as? [String: Any] ?? [:]
        #expect(labels["pod-security.kubernetes.io/enforce"] as? String == "restricted")
        #expect(labels["pod-security.kubernetes.io/enforce-version"] != nil)

        var pods = 0
        for kind in ["Deployment", "StatefulSet", "Job"] {
            for object in objects[kind] ?? [] {
                let name = ((object["metadata"] as? [String: Any])?["name"] as? String) ?? kind
                let spec = try #require((object["spec"] as? [String: Any])?["template"] as? [String: Any])
                let pod = try #require(spec["spec"] as? [String: Any], "\(name)")
                pods += 1
                #expect(pod["automountServiceAccountToken"] as? Bool == false, "\(name)")
                let context = try #require(pod["securityContext"] as? [String: Any], "\(name): no pod securityContext")
                #expect(context["runAsNonRoot"] as? Bool == true && context["runAsUser"] as? Int == 10001, "\(name)")
                #expect(context["runAsGroup"] as? Int == 10001 && context["fsGroup"] as? Int == 10001, "\(name)")
                #expect((context["seccompProfile"] as? [String: Any])?["type"] as? String == "RuntimeDefault", "\(name)")
                let volumes = pod["volumes"] as? [[String: Any]] ?? []
                for volume in volumes {
                    if let secret = volume["secret"] as? [String: Any] {
                        #expect(secret["defaultMode"] as? Int == 0o440, "\(name): secret volume \(volume["name"] ?? "")")
                    }
                }
                let emptyDirs = Set(volumes.filter { $0["emptyDir"] != nil }.compactMap { $0["name"] as? String })
                for container in pod["containers"] as? [[String: Any]] ?? [] {
                    let security = try #require(container["securityContext"] as? [String: Any], "\(name): no container securityContext")
                    #expect(security["allowPrivilegeEscalation"] as? Bool == false, "\(name)")
                    #expect(security["readOnlyRootFilesystem"] as? Bool == true, "\(name)")
                    #expect((security["capabilities"] as? [String: Any])?["drop"] as? [String] == ["ALL"], "\(name)")
                    let mounts = container["volumeMounts"] as? [[String: Any]] ?? []
                    #expect(
                        mounts.contains { $0["mountPath"] as? String == "/tmp" && emptyDirs.contains($0["name"] as? String ?? "") },
                        "\(name): /tmp is writable (an emptyDir)")
                }
            }
        }
        #expect(pods == 4)

        // The agent keeps its data in a directory it makes inside the volume (the volume's root
        // belongs to root and the fsGroup; the agent's owner-only rule wants its own).
        let agentSet = try #require(objects["StatefulSet"]?.first)
        let agentPod = ((agentSet["spec"] as? [String: Any])?["template"] as? [String: Any])?["spec"] as? [String: Any]
        let agent = try #require((agentPod?["containers"] as? [[String: Any]])?.first)
        let environment = agent["env"] as? [[String: Any]] ?? []
        let dataDirectory = environment.first { $0["name"] as? String == "RESCIND_AGENT_DATA_DIR" }?["value"] as? String
        let dataMount = (agent["volumeMounts"] as? [[String: Any]] ?? []).first { $0["name"] as? String == "data" }?["mountPath"] as? String
        #expect(dataMount == "/var/lib/rescind/data" && dataDirectory == "/var/lib/rescind/data/agent")

        for job in objects["Job"] ?? [] {
            #expect((job["spec"] as? [String: Any])?["ttlSecondsAfterFinished"] as? Int != nil, "a finished Job is cleaned up")
        }
    }

    /// One disruption budget per service, ingress denied unless admitted, and `/metrics` on a
    /// port of its own (a policy admits by port, not path): the container's `metrics` port is
    /// the one its `RESCIND_*_METRICS_PORT` sets and Prometheus' annotation names, and the
    /// service's policy admits the monitoring namespace there and nowhere else, and no one else there.
    @Test func servicesHaveDisruptionBudgetsAndNetworkPolicies() throws {
        let objects = try Self.kubernetesObjects()
        func selector(_ object: [String: Any]) -> [String: String] {
            let spec = object["spec"] as? [String: Any]
            let selector = (spec?["selector"] ?? spec?["podSelector"]) as? [String: Any]
            return (selector?["matchLabels"] as? [String: String]) ?? [:]
        }
        let budgets = (objects["PodDisruptionBudget"] ?? []).map(selector)
        let policies = objects["NetworkPolicy"] ?? []
        #expect(policies.contains { selector($0).isEmpty && ((($0["spec"] as? [String: Any])?["ingress"]) == nil) }, "default deny")
        for deployment in objects["Deployment"] ?? [] {
            let labels = selector(deployment)
            #expect(budgets.contains(labels), "no PodDisruptionBudget for \(labels)")
            let policy = try #require(policies.first { selector($0) == labels }, "no NetworkPolicy for \(labels)")
            let template = (deployment["spec"] as? [String: Any])?["template"] as? [String: Any]
            let container = try #require(((template?["spec"] as? [String: Any])?["containers"] as? [[String: Any]])?.first)
            let ports = container["ports"] as? [[String: Any]] ?? []
            let metricsPort = try #require(ports.first { $0["name"] as? String == "metrics" }?["containerPort"] as? Int, "\(labels)")
            let servicePorts = Set(ports.compactMap { $0["containerPort"] as? Int }).subtracting([metricsPort])
            let environment = container["env"] as? [[String: Any]] ?? []
            let setting = environment.first { ($0["name"] as? String)?.hasSuffix("_METRICS_PORT") == true }
            #expect(setting?["value"] as? String == "\(metricsPort)", "\(labels): the service listens on its metrics port")
            let annotations = (template?["metadata"] as? [String: Any])?["annotations"] as? [String: Any] ?? [:]
            #expect(annotations["prometheus.io/port"] as? String == "\(metricsPort)", "\(labels): Prometheus scrapes the metrics port")
            let rules = ((policy["spec"] as? [String: Any])?["ingress"] as? [[String: Any]]) ?? []
            var monitoringPorts: Set<Int> = [], otherPorts: Set<Int> = []
            for rule in rules {
                let text = try Yams.dump(object: rule["from"] ?? [])
                let rulePorts = (rule["ports"] as? [[String: Any]] ?? []).compactMap { $0["port"] as? Int }
                if text.contains("kubernetes.io/metadata.name: monitoring") {
                    #expect((rule["from"] as? [Any])?.count == 1, "\(labels): the monitoring rule admits the monitoring namespace alone")
                    monitoringPorts.formUnion(rulePorts)
                } else {
                    otherPorts.formUnion(rulePorts)
                }
            }
            #expect(monitoringPorts == [metricsPort], "\(labels): Prometheus is admitted on the metrics port only")
            #expect(!otherPorts.contains(metricsPort) && !otherPorts.isEmpty, "\(labels): no one else reaches the metrics port")
            #expect(otherPorts == servicePorts, "\(labels): the API's clients reach its port")
        }
    }

    /// The build stages of deploy/Dockerfile by name (`FROM … AS name`), each with its base and lines.
    static func dockerStages() throws -> [String: (base: String, lines: [String])] {
        let text = try String(contentsOf: deploy.appendingPathComponent("Dockerfile"), encoding: .utf8)
        // Continuation lines joined, comments dropped: one instruction per line.
        let instructions = text.replacingOccurrences(of: "\\\n", with: " ").split(separator: "\n").map(String.init)
            .filter { !$0.hasPrefix("#") && !$0.trimmingCharacters(in: .whitespaces).isEmpty }
        var stages: [String: (base: String, lines: [String])] = [:]
        var current: String?
        for line in instructions {
            let words = line.split(separator: " ").map(String.init)
            if words.first == "FROM" {
                #expect(words.count == 4 && words[2] == "AS", "a stage without a name: \(line)")
                current = words.last
                stages[words.last!] = (words[1], [])
            } else if let current {
                stages[current]!.lines.append(line)
            }
        }
        return stages
    }

    /// The images as a platform runs them: base images as build arguments (an official Swift
    /// image at least as new as the manifest's tools version, Debian slim), each role's
    /// executable with its resource bundles as directories (a COPY of a directory copies its
    /// contents), uid/gid 10001, a HEALTHCHECK (or an explicit NONE), OCI labels, and a version stamp that matches
    /// RescindVersion.swift.
    @Test func theDockerfileBuildsImagesAPlatformCanRun() throws {
        let text = try String(contentsOf: Self.deploy.appendingPathComponent("Dockerfile"), encoding: .utf8)
        let manifest = try String(contentsOf: ModuleGraphTests.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let tools = try #require(manifest.firstMatch(of: #/swift-tools-version:(\d+)\.(\d+)/#))
        let swiftImage = try #require(text.firstMatch(of: #/(?m)^ARG SWIFT_IMAGE=swift:(\d+)\.(\d+)(\.\d+)?-bookworm$/#), "SWIFT_IMAGE")
        let newEnough = (Int(swiftImage.1)!, Int(swiftImage.2)!) >= (Int(tools.1)!, Int(tools.2)!)
        #expect(newEnough, "the build image predates the tools version")
        #expect(text.contains("\nARG RUNTIME_IMAGE=debian:bookworm-slim\n"))

        let stages = try Self.dockerStages()
        #expect(stages["build"]?.base == "${SWIFT_IMAGE}" && stages["runtime"]?.base == "${RUNTIME_IMAGE}")
        // The roles copy from `binaries`: the release build from source unless BINARIES=prebuilt
        // (the host's build, as scripts/check-containers.sh stages it).
        #expect(text.contains("\nARG BINARIES=build\n") && stages["binaries"]?.base == "${BINARIES}")
        #expect(stages["prebuilt"]?.lines == ["COPY .stack/containers/prebuilt/ /out/"])
        let runtime = try #require(stages["runtime"])
        #expect(runtime.lines.contains("USER 10001:10001"), "numeric, so that runAsNonRoot can check it")
        #expect(runtime.lines.contains { $0.contains("--uid 10001") && $0.contains("--gid 10001") })
        #expect(runtime.lines.contains { $0.contains("install -d -o 10001 -g 10001 -m 0700 /var/lib/rescind/agent") })
        let labels = runtime.lines.filter { $0.hasPrefix("LABEL") }.joined(separator: " ")
        for label in ["title", "description", "version", "base.name"] {
            #expect(labels.contains("org.opencontainers.image.\(label)="), "OCI label \(label)")
        }

        // Targets with resources get a bundle `Rescind_<Target>.resources` next to their executable.
        let sources = ModuleGraphTests.root.appendingPathComponent("Sources")
        let bundled = try FileManager.default.contentsOfDirectory(atPath: sources.path).filter {
            FileManager.default.fileExists(atPath: sources.appendingPathComponent($0).appendingPathComponent("Resources").path)
        }
        #expect(Set(bundled) == ["GrantService", "AuditService"], "\(bundled): give every bundle to its images")
        let build = try #require(stages["build"]).lines.joined(separator: "\n")
        // The manifest reads Plugins/ (the generator of RescindProtocol's HTTP types) as well as the sources.
        for folder in ["Plugins", "Sources", "Tests"] { #expect(build.contains("COPY \(folder) ./\(folder)"), "the build copies \(folder)/") }
        let roles: [(role: String, executable: String, bundles: [String], healthCheck: Bool)] = [
            ("grant-service", "rescind-grant-service", ["Rescind_GrantService.resources"], true),
            ("audit-service", "rescind-audit-service", ["Rescind_AuditService.resources"], true),
            // The agent serves nothing to probe; the CLI and the admin tool are one-shot.
            ("agent", "rescind-agent", [], false), ("cli", "rescind", [], false), ("admin", "rescind-admin", [], false),
        ]
        for (role, executable, bundles, healthCheck) in roles {
            let stage = try #require(stages[role], "no \(role) stage")
            #expect(stage.base == "runtime", "\(role) runs on the runtime stage")
            #expect(!stage.lines.contains { $0.hasPrefix("USER") }, "\(role) keeps uid 10001")
            #expect(stage.lines.contains("COPY --from=binaries /out/\(role)/ /app/"), "\(role): its files, bundles as directories")
            #expect(build.contains("cp \"$bin\"/\(executable) /out/\(role)/"), "\(role): its executable")
            for bundle in bundles { #expect(build.contains("cp -R \"$bin\"/\(bundle) /out/\(role)/"), "\(role): \(bundle)") }
            #expect(stage.lines.contains { $0.hasPrefix("ENTRYPOINT [\"/app/\(executable)\"") })
            let check = stage.lines.first { $0.hasPrefix("HEALTHCHECK") }
            #expect(healthCheck ? check?.contains(" CMD ") == true : check == "HEALTHCHECK NONE", "\(role): \(check ?? "no HEALTHCHECK")")
            #expect(stage.lines.contains { $0.hasPrefix("LABEL org.opencontainers.image.title=") })
        }
        #expect(!text.contains("*.resources"), "a glob of bundles into one directory merges their contents")

        // The version stamp's pattern matches the line it rewrites.
        let versionFile = try String(
            contentsOf: sources.appendingPathComponent("RescindObservability/RescindVersion.swift"), encoding: .utf8)
        #expect(text.contains(#"s|^    public static let current = \".*\"\$|"#))
        #expect(versionFile.contains(try Regex(#"(?m)^    public static let current = ".*"$"#)))
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
        let common = try String(contentsOf: Self.deploy.appendingPathComponent("k8s/config.yaml"), encoding: .utf8)
        #expect(common.contains("RESCIND_CA_FILE"))
        let secrets = try String(contentsOf: Self.deploy.appendingPathComponent("k8s-examples/secrets.example.yaml"), encoding: .utf8)
        #expect(secrets.contains("sslmode=verify-full"))
    }
}
