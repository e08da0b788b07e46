import Foundation
import RescindDevKit
import RescindTestSupport
import Testing

/// `RESCIND_OTEL_EXPORTER_OTLP_ENDPOINT` on real processes: the owner's `rescind` and the grant
/// service export their spans to a collector (the test kit's receiver), and a command is one
/// trace across both — the CLI's root span, a client span per request, the service's server span
/// under it — with no id in clear anywhere. A malformed `traceparent` starts a trace of the
/// service's own.
@Suite(.serialized) struct TracingProcessTests {
    @Test(.timeLimit(.minutes(3)))
    func aCommandIsOneTraceFromTheCLIThroughTheGrantService() async throws {
        try #require(RescindProcess.isBuilt)
        let receiver = try await OTLPReceiver.start()
        let cluster = try DevelopmentCluster()
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("rescind-trace-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        var environment = try await ShutdownDeadlineProcessTests.environment(
            "rescind-grant-service", databaseURL: GrantServiceHarness.databaseURL, cluster: cluster, scratch: scratch)
        environment["RESCIND_OTEL_EXPORTER_OTLP_ENDPOINT"] = receiver.endpoint.absoluteString
        let port = try FreePort.next()
        environment["RESCIND_GRANT_PORT"] = "\(port)"
        let service = try await ShutdownDeadlineProcessTests.start(
            "rescind-grant-service", environment: environment, log: scratch.appendingPathComponent("grant.log"))
        let schema = environment["RESCIND_GRANT_DB_SCHEMA"]!
        defer {
            service.killGroup()
            cluster.shutdown()
            try? FileManager.default.removeItem(at: scratch)
            Task { await TestDatabase.dropSchema(schema) }
        }
        let grantURL = "http://127.0.0.1:\(port)"

        let keyFile = scratch.appendingPathComponent("a.key")
        try CLIProfile.makeKeyFile(at: keyFile)
        let created = try await RescindProcess.run(
            ["identity", "create", "--name", "Adult A", "--profile", scratch.appendingPathComponent("a").path, "--grant-service", grantURL],
            environment: [
                "RESCIND_KEY_FILE": keyFile.path, "RESCIND_ALLOW_PLAIN_HTTP": "loopback",
                "RESCIND_OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint.absoluteString,
            ])
        #expect(created.status == 0, "\(created)")

        // A request with a malformed traceparent (upper-case hex): served, and traced as a root.
        let junk = "00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01"
        let served = try await TestHTTP.send(
            "GET", URL(string: "\(grantURL)/v1/service-key")!, headers: [("traceparent", junk)], body: nil)
        #expect(served.status == 200)

        let spans = try await CLITestBed.eventually("the service's spans") { () -> [[String: Any]]? in
            let spans = receiver.spans
            let served = spans.contains { $0["name"] as? String == "GET /v1/service-key" && $0["parentSpanId"] == nil }
            return served && spans.contains { $0["name"] as? String == "POST /v1/users" } ? spans : nil
        }
        await receiver.stop()

        let root = try #require(spans.first { $0["name"] as? String == "rescind identity create" }, "\(spans)")
        let traceID = try #require(root["traceId"] as? String)
        #expect(root["parentSpanId"] == nil && root["service"] as? String == "rescind")
        let clientSpans = spans.filter { $0["service"] as? String == "rescind" && $0["parentSpanId"] as? String == root["spanId"] as? String }
        #expect(clientSpans.count >= 2 && clientSpans.allSatisfy { ($0["name"] as? String)?.hasPrefix("HTTP ") == true }, "\(clientSpans)")
        let registration = try #require(spans.first { $0["name"] as? String == "POST /v1/users" })
        #expect(registration["service"] as? String == "rescind-grant-service" && registration["kind"] as? Int == 2)
        #expect(registration["traceId"] as? String == traceID)
        #expect(clientSpans.contains { $0["spanId"] as? String == registration["parentSpanId"] as? String }, "\(registration)")
        // Every server span of the command is in its trace, under one of its client spans.
        let serverSpans = spans.filter { $0["service"] as? String == "rescind-grant-service" && $0["traceId"] as? String == traceID }
        #expect(serverSpans.count == clientSpans.count, "\(serverSpans.map { $0["name"] ?? "" })")

        let junkSpan = try #require(spans.first { $0["name"] as? String == "GET /v1/service-key" && $0["parentSpanId"] == nil })
        #expect(junkSpan["traceId"] as? String != "4bf92f3577b34da6a3ce929d0e0e4736" && junkSpan["traceId"] as? String != traceID)

        // Nothing that left either process names a user, a device or a family member.
        for body in receiver.rawBodies {
            let id = body.firstMatch(of: /[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}/)
            #expect(id == nil, "an id in an exported span: \(body.prefix(2000))")
        }
    }
}
