import Foundation
import RescindDevKit
import RescindTestSupport
import Testing

/// `RESCIND_LOG_FORMAT=json`: every log line an executable writes is one JSON object with its
/// timestamp, level, label, message and metadata, for a collector to parse; `text` (the
/// default) keeps swift-log's lines; anything else stops the executable at start with one line
/// naming the variable. Real processes on the shared PostgreSQL and a development broker.
@Suite(.serialized) struct LogFormatProcessTests {
    /// Parses every non-empty line of `text` as a JSON object with the five fields.
    static func jsonLines(_ text: String, of program: String) throws -> [[String: Any]] {
        try text.split(separator: "\n").filter { !$0.isEmpty }.map { line in
            let object = try #require(
                try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(program): not a JSON object: \(line)")
            for field in ["timestamp", "level", "label", "message"] {
                #expect(object[field] is String, "\(program): \(field) missing in \(line)")
            }
            #expect(object["metadata"] is [String: Any], "\(program): metadata missing in \(line)")
            return object
        }
    }

    @Test(.timeLimit(.minutes(3)), arguments: ["rescind-grant-service", "rescind-audit-service"])
    func aServiceLogsOneJSONObjectPerLine(program: String) async throws {
        let cluster = try DevelopmentCluster()
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("rescind-json-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        var environment = try await ShutdownDeadlineProcessTests.environment(
            program, databaseURL: GrantServiceHarness.databaseURL, cluster: cluster, scratch: scratch)
        let schema = environment[program == "rescind-grant-service" ? "RESCIND_GRANT_DB_SCHEMA" : "RESCIND_AUDIT_DB_SCHEMA"]!
        defer {
            cluster.shutdown()
            try? FileManager.default.removeItem(at: scratch)
        }

        environment["RESCIND_LOG_FORMAT"] = "xml"
        let refused = try await ChildProcess.run(
            RescindProcess.adminBinary.deletingLastPathComponent().appendingPathComponent(program), [],
            environment: environment, timeout: .seconds(30), separateOutput: true)
        #expect(refused.status == 1 && refused.stderr == "\(program): RESCIND_LOG_FORMAT must be text or json\n", "\(refused.stderr)")

        environment["RESCIND_LOG_FORMAT"] = "json"
        let service = try await ShutdownDeadlineProcessTests.start(
            program, environment: environment, log: scratch.appendingPathComponent("service.log"))
        service.killGroup()
        await TestDatabase.dropSchema(schema)
        let lines = try Self.jsonLines(service.text, of: program)
        let listening = try #require(lines.first { ($0["message"] as? String)?.hasSuffix("service listening") == true })
        #expect(listening["level"] as? String == "info")
        #expect(listening["label"] as? String == "rescind.\(program.dropFirst("rescind-".count))")
        #expect((listening["metadata"] as? [String: Any])?["rescind.port"] != nil, "\(listening)")
        #expect((listening["timestamp"] as? String).map { $0.hasSuffix("Z") && $0.count == 24 } == true, "\(listening)")
    }

    /// The operator's tool: log lines as JSON on standard error, its output untouched on standard
    /// output; the agent refuses an unknown format as the services do.
    @Test(.timeLimit(.minutes(2)))
    func theAdminToolAndTheAgentReadTheFormatToo() async throws {
        let schema = "json_\(UUID().uuidString.prefix(8).lowercased())"
        let migrated = try await RescindProcess.admin(
            ["migrate", "audit", "--schema", schema, "--directory", ShutdownDeadlineProcessTests.root.appendingPathComponent("migrations/audit").path],
            environment: ["RESCIND_DATABASE_URL": GrantServiceHarness.databaseURL, "RESCIND_LOG_FORMAT": "json"])
        await TestDatabase.dropSchema(schema)
        #expect(migrated.status == 0, "\(migrated)")
        #expect(migrated.stdout.hasPrefix("\(schema): applied "), "\(migrated)")
        let lines = try Self.jsonLines(migrated.stderr, of: "rescind-admin")
        #expect(lines.contains { $0["message"] as? String == "applied migration" }, "\(migrated)")

        let refused = try await RescindProcess.admin(["keys", "token", "/nonexistent/token"], environment: ["RESCIND_LOG_FORMAT": "JSON"])
        #expect(refused.status == 1 && refused.stderr == "rescind-admin: RESCIND_LOG_FORMAT must be text or json\n", "\(refused)")

        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("rescind-json-agent-\(UUID())")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let grantKey = try await RescindProcess.admin(["keys", "generate", scratch.appendingPathComponent("grant.key").path])
        try #require(grantKey.status == 0, "\(grantKey)")
        let agent = try await RescindProcess.run(
            ["status"],
            environment: [
                "RESCIND_AGENT_GRANT_SERVICE_URL": "https://127.0.0.1:1", "RESCIND_AGENT_PASSPHRASE": "unused",
                "RESCIND_KAFKA_BOOTSTRAP_SERVERS": "127.0.0.1:9092",
                "RESCIND_AGENT_GRANT_SERVICE_KEY": grantKey.stdout.trimmingCharacters(in: .whitespacesAndNewlines),
                "RESCIND_AGENT_DATA_DIR": scratch.appendingPathComponent("agent").path, "RESCIND_LOG_FORMAT": "yaml",
            ],
            timeout: .seconds(30), executable: RescindProcess.agentBinary)
        #expect(agent.status == 1 && agent.stderr.contains("RESCIND_LOG_FORMAT must be text or json"), "\(agent)")
    }
}
