import Foundation
import RescindDevKit
import RescindTestSupport
import Testing

/// `RESCIND_GRANT_METRICS_PORT` / `RESCIND_AUDIT_METRICS_PORT`: `/metrics` on a port of its own,
/// so that a network policy (which admits by port, not path) can open it to the scraper alone.
/// Set, the metrics port answers `/metrics` over HTTPS with the main port's certificate and
/// nothing else, and the main port answers `/metrics` with 404 while its API stays as it was; a
/// metrics port equal to the main port stops the service at start with one line naming both.
/// Real processes on the shared PostgreSQL and a development broker.
@Suite(.serialized) struct MetricsPortProcessTests {
    @Test(.timeLimit(.minutes(3)), arguments: ["rescind-grant-service", "rescind-audit-service"])
    func metricsAnswerOnTheirOwnPortAndNotOnTheMainOne(program: String) async throws {
        let cluster = try DevelopmentCluster()
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("rescind-metrics-port-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        let service = program == "rescind-grant-service" ? "GRANT" : "AUDIT"
        var environment = try await ShutdownDeadlineProcessTests.environment(
            program, databaseURL: GrantServiceHarness.databaseURL, cluster: cluster, scratch: scratch)
        let schema = environment["RESCIND_\(service)_DB_SCHEMA"]!
        let tls = try await TestTLS.shared()
        environment.merge(tls.environment) { $1 }
        defer {
            cluster.shutdown()
            try? FileManager.default.removeItem(at: scratch)
        }

        let (mainPort, metricsPort) = (try FreePort.next(), try FreePort.next())
        try #require(mainPort != metricsPort)
        environment["RESCIND_\(service)_PORT"] = "\(mainPort)"
        environment["RESCIND_\(service)_METRICS_PORT"] = "\(mainPort)"
        let executable = RescindProcess.binary.deletingLastPathComponent().appendingPathComponent(program)
        let refused = try await ChildProcess.run(executable, [], environment: environment, timeout: .seconds(30), separateOutput: true)
        #expect(
            refused.status == 1 && refused.stderr == "\(program): RESCIND_\(service)_METRICS_PORT: must differ from RESCIND_\(service)_PORT\n",
            "\(refused.stderr)")

        environment["RESCIND_\(service)_METRICS_PORT"] = "\(metricsPort)"
        let process = try await ShutdownDeadlineProcessTests.start(
            program, environment: environment, log: scratch.appendingPathComponent("service.log"))
        defer { process.killGroup() }
        let deadline = ContinuousClock.now + .seconds(30)
        while !process.text.contains("service metrics listening"), process.isRunning, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(process.text.contains("service metrics listening"), "\(process.logTail(lines: 20))")

        func get(_ port: Int, _ path: String) async throws -> TestHTTP.Answer {
            try await TestHTTP.send("GET", URL(string: "https://127.0.0.1:\(port)\(path)")!, headers: [("Connection", "close")])
        }
        let metrics = try await get(metricsPort, "/metrics")
        #expect(metrics.status == 200)
        #expect(metrics.contentType?.hasPrefix("text/plain") == true)
        #expect(metrics.text.split(separator: "\n").contains { $0.hasPrefix("rescind_build_info{") }, "\(metrics.text.prefix(300))")
        #expect(metrics.text.contains("rescind_database_up"))
        // The metrics port serves the metrics alone: nothing of the API or the probes.
        #expect(try await get(metricsPort, "/health").status == 404)
        #expect(try await get(metricsPort, "/v1/openapi.yaml").status == 404)

        // The main port: its API and probes as before, no metrics.
        #expect(try await get(mainPort, "/metrics").status == 404)
        #expect(try await get(mainPort, "/health").status == 200)
        #expect(try await get(mainPort, "/v1/openapi.yaml").status == 200)
        // The main port's requests are still counted, and show on the metrics port.
        let counted = try await get(metricsPort, "/metrics").text
        #expect(counted.contains("http_route=\"/health\""), "\(counted.prefix(600))")

        process.killGroup()
        await TestDatabase.dropSchema(schema)
    }
}
