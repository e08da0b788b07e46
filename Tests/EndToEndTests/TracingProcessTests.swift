import Foundation
import RescindDevKit
import RescindTestSupport
import Testing

/// `RESCIND_OTEL_EXPORTER_OTLP_ENDPOINT` on real processes: the owner's `rescind` and the grant
/// service export their spans to a collector (the test kit's receiver), and a command is one
/// trace across both — the CLI's root span, a client span per request, the service's server span
/// under it, the relay's publish of what the request committed — with no id in clear anywhere.
/// A malformed `traceparent` starts a trace of the service's own.
@Suite(.serialized) struct TracingProcessTests {
    /// A grant service process exporting to a fresh receiver, on its own cluster, schema and port.
    static func withTracedGrantService(
        _ body: (_ grantURL: String, _ receiver: OTLPReceiver, _ scratch: URL) async throws -> Void
    ) async throws {
        try #require(RescindProcess.isBuilt)
        let (receiver, cluster, scratch) = (try await OTLPReceiver.start(), try DevelopmentCluster(), try Self.scratchDirectory())
        let (environment, port) = try await Self.tracedEnvironment(exportingTo: receiver, cluster: cluster, scratch: scratch)
        let service = try await ShutdownDeadlineProcessTests.start(
            "rescind-grant-service", environment: environment, log: scratch.appendingPathComponent("grant.log"))
        let schema = environment["RESCIND_GRANT_DB_SCHEMA"]!
        defer {
            service.killGroup()
            cluster.shutdown()
            try? FileManager.default.removeItem(at: scratch)
            Task { await TestDatabase.dropSchema(schema) }
        }
        do {
            try await body("http://127.0.0.1:\(port)", receiver, scratch)
        } catch {
            await receiver.stop()
            throw error
        }
        await receiver.stop()
    }

    /// A fresh directory for one test's profiles and logs.
    static func scratchDirectory() throws -> URL {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("rescind-trace-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        return scratch
    }

    /// The environment of a grant service process exporting its spans to `receiver`, on
    /// `cluster`, with a schema and a port of its own.
    static func tracedEnvironment(
        exportingTo receiver: OTLPReceiver, cluster: DevelopmentCluster, scratch: URL
    ) async throws -> (environment: [String: String], port: Int) {
        var environment = try await ShutdownDeadlineProcessTests.environment(
            "rescind-grant-service", databaseURL: GrantServiceHarness.databaseURL, cluster: cluster, scratch: scratch)
        environment["RESCIND_OTEL_EXPORTER_OTLP_ENDPOINT"] = receiver.endpoint.absoluteString
        let port = try FreePort.next()
        environment["RESCIND_GRANT_PORT"] = "\(port)"
        return (environment, port)
    }

    /// `rescind` with tracing on, against the test's grant service, as the person whose profile
    /// and key file are named `name` in `scratch`.
    static func rescind(
        _ arguments: [String], as name: String, in scratch: URL, grantURL: String, receiver: OTLPReceiver
    ) async throws -> RescindProcess.Output {
        let keyFile = scratch.appendingPathComponent("\(name).key")
        if !FileManager.default.fileExists(atPath: keyFile.path) { try CLIProfile.makeKeyFile(at: keyFile) }
        return try await RescindProcess.run(
            arguments + ["--profile", scratch.appendingPathComponent(name).path, "--grant-service", grantURL],
            environment: [
                "RESCIND_KEY_FILE": keyFile.path, "RESCIND_ALLOW_PLAIN_HTTP": "loopback",
                "RESCIND_OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint.absoluteString,
            ])
    }

    @Test(.timeLimit(.minutes(3)))
    func aCommandIsOneTraceFromTheCLIThroughTheGrantService() async throws {
        try await Self.withTracedGrantService { grantURL, receiver, scratch in
            let created = try await Self.rescind(
                ["identity", "create", "--name", "Adult A"], as: "a", in: scratch, grantURL: grantURL, receiver: receiver)
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

    /// `rescind revoke` starts the revocation's trace: the command's root span, the revocation
    /// and its steps under it, the commit's request, the grant service's server span under that,
    /// and the relay's `relay publish` of each message the commit wrote under the server span —
    /// whose context the Kafka headers carry on (the agents' and the audit service's part is
    /// `DemoEndToEndTests`'s).
    @Test(.timeLimit(.minutes(3)))
    func aRevocationFromTheCLIIsOneTraceThroughTheRelay() async throws {
        try await Self.withTracedGrantService { try await Self.revokeTraced(grantURL: $0, receiver: $1, scratch: $2) }
    }

    /// A and C made with `rescind`, A's family member shared with C and revoked from C, traced.
    static func revokeTraced(grantURL: String, receiver: OTLPReceiver, scratch: URL) async throws {
        let person = Person(scratch: scratch, grantURL: grantURL, receiver: receiver)
        _ = try await person.ok(["identity", "create", "--name", "Adult A"], as: "a")
        let adultC = try await person.ok(["identity", "create", "--name", "Adult C"], as: "c")
        let userC = try #require(CLITestBed.value(after: "user", in: adultC))
        let emma = try await person.ok(["family-member", "create"], as: "a").trimmed
        _ = try await person.ok(["record", "add", emma, "--text", "penicillin allergy"], as: "a")
        _ = try await person.ok(["grant", emma, "--to", userC], as: "a")
        let revoked = try await person.ok(["revoke", emma, "--user", userC, "--yes"], as: "a")
        let commanded = try #require(revoked.firstMatch(of: /, (\d+) devices notified/).flatMap { Int($0.1) }, "\(revoked)")

        // The event and one command per device commanded (none here: a CLI profile is not an
        // agent; the demo's test has six), each published under its own span.
        let trace = try await CLITestBed.eventually("the revocation's spans") { () -> [[String: Any]]? in
            let spans = receiver.spans
            guard let root = spans.first(where: { $0["name"] as? String == "rescind revoke" }) else { return nil }
            let trace = spans.filter { $0["traceId"] as? String == root["traceId"] as? String }
            return trace.count(where: { $0["name"] as? String == "relay publish" }) >= 1 + commanded ? trace : nil
        }
        let root = try #require(trace.first { $0["name"] as? String == "rescind revoke" })
        let revocation = Self.children(of: root, named: "revocation", in: trace).first
        let commit = Self.children(of: revocation, named: "commit", in: trace).first
        let request = Self.children(of: commit, named: "HTTP POST", in: trace).first
        let served = trace.first {
            $0["service"] as? String == "rescind-grant-service" && $0["parentSpanId"] as? String == request?["spanId"] as? String
        }
        #expect(served?["name"] as? String == "POST /v1/revocations/{revocationID}/commit", "\(trace.map { $0["name"] ?? "" })")
        let published = Self.children(of: served, named: "relay publish", in: trace)
        #expect(published.count == 1 + commanded && published.allSatisfy { $0["service"] as? String == "rescind-grant-service" },
            "\(commanded) commanded; parents of the trace's relay spans: \(Self.parents(of: "relay publish", in: trace))")
        for body in receiver.rawBodies {
            #expect(body.firstMatch(of: /[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}/) == nil, "\(body.prefix(2000))")
        }
    }

    /// The collector goes down while the service runs: requests are answered as before, and the
    /// service's `/metrics` counts the spans it exported and those it dropped.
    @Test(.timeLimit(.minutes(2)))
    func theSpansACollectorNeverTookAreCountedInTheServicesMetrics() async throws {
        try await Self.withTracedGrantService { grantURL, receiver, _ in
            func metric(_ name: String) async throws -> Int? {
                let text = String(decoding: try await TestHTTP.send("GET", URL(string: "\(grantURL)/metrics")!).body, as: UTF8.self)
                return text.split(separator: "\n").first { $0.hasPrefix("\(name) ") }.flatMap { Int($0.split(separator: " ").last ?? "") }
            }
            let serviceKey = URL(string: "\(grantURL)/v1/service-key")!
            #expect(try await TestHTTP.send("GET", serviceKey).status == 200)
            _ = try await CLITestBed.eventually("the exported spans counted") { () -> Int? in
                try await metric("rescind_trace_spans_exported_total").flatMap { $0 > 0 ? $0 : nil }
            }
            await receiver.stop()
            let clock = ContinuousClock()
            for _ in 0..<5 {
                let started = clock.now
                #expect(try await TestHTTP.send("GET", serviceKey).status == 200)
                #expect(clock.now - started < .seconds(1), "a request waited on the collector")
            }
            _ = try await CLITestBed.eventually("the dropped spans counted") { () -> Int? in
                try await metric("rescind_trace_spans_dropped_total").flatMap { $0 >= 5 ? $0 : nil }
            }
        }
    }

    /// Crashes: the grant service dies with SIGKILL after the commit and before its relay could
    /// publish (every broker down). The outbox row kept the commit's trace context, so the grant
    /// service started after it — another process — publishes the revocation's event in that
    /// trace, under the commit's server span of the process that died.
    @Test(.timeLimit(.minutes(3)))
    func aRelayKilledBeforeItPublishedPublishesInTheTraceAfterARestart() async throws {
        try #require(RescindProcess.isBuilt)
        let (receiver, cluster, scratch) = (try await OTLPReceiver.start(), try DevelopmentCluster(), try Self.scratchDirectory())
        let traced = try await Self.tracedEnvironment(exportingTo: receiver, cluster: cluster, scratch: scratch)
        var environment = traced.environment
        let port = traced.port
        // A batch claimed by the process that dies passes to the next one within seconds.
        environment["RESCIND_OUTBOX_CLAIM_LEASE_SECONDS"] = "5"
        let schema = environment["RESCIND_GRANT_DB_SCHEMA"]!
        let first = try await ShutdownDeadlineProcessTests.start(
            "rescind-grant-service", environment: environment, log: scratch.appendingPathComponent("grant-1.log"))
        var second: ChildProcess?
        defer {
            first.killGroup()
            second?.killGroup()
            cluster.shutdown()
            try? FileManager.default.removeItem(at: scratch)
            Task { await TestDatabase.dropSchema(schema) }
        }
        let person = Person(scratch: scratch, grantURL: "http://127.0.0.1:\(port)", receiver: receiver)
        _ = try await person.ok(["identity", "create", "--name", "Adult A"], as: "a")
        let adultC = try await person.ok(["identity", "create", "--name", "Adult C"], as: "c")
        let userC = try #require(CLITestBed.value(after: "user", in: adultC))
        let emma = try await person.ok(["family-member", "create"], as: "a").trimmed
        _ = try await person.ok(["grant", emma, "--to", userC], as: "a")
        for broker in cluster.brokerIDs { try await cluster.setBrokerDown(broker) }
        _ = try await person.ok(["revoke", emma, "--user", userC, "--yes"], as: "a")

        // The commit's server span has left the first process; then it dies, its event unsent.
        let served = try await CLITestBed.eventually("the commit's server span") { () -> [String: Any]? in
            receiver.spans.first { $0["name"] as? String == "POST /v1/revocations/{revocationID}/commit" }
        }
        first.killGroup()
        for broker in cluster.brokerIDs { try await cluster.setBrokerUp(broker) }
        second = try await ShutdownDeadlineProcessTests.start(
            "rescind-grant-service", environment: environment, log: scratch.appendingPathComponent("grant-2.log"))

        let published = try await CLITestBed.eventually("the event published after the restart") { () -> [String: Any]? in
            receiver.spans.first {
                $0["name"] as? String == "relay publish" && $0["traceId"] as? String == served["traceId"] as? String
            }
        }
        #expect(published["parentSpanId"] as? String == served["spanId"] as? String, "\(published)")
        #expect(
            published["instance"] as? String != served["instance"] as? String,
            "published by the process started after the kill, not the one that served the commit")
        await receiver.stop()
    }

    /// The names of the parents of the spans named `name` in `trace`.
    static func parents(of name: String, in trace: [[String: Any]]) -> [String] {
        trace.filter { $0["name"] as? String == name }.map { span in
            trace.first { $0["spanId"] as? String == span["parentSpanId"] as? String }?["name"] as? String ?? "none"
        }
    }

    /// The spans of `trace` named `name` whose parent is `parent`.
    static func children(of parent: [String: Any]?, named name: String, in trace: [[String: Any]]) -> [[String: Any]] {
        trace.filter { $0["name"] as? String == name && $0["parentSpanId"] as? String == parent?["spanId"] as? String }
    }

    /// The people of a test, each a `rescind` profile in `scratch` named by a short name.
    struct Person {
        let scratch: URL
        let grantURL: String
        let receiver: OTLPReceiver

        /// Runs a command that must succeed; returns its standard output.
        func ok(_ arguments: [String], as name: String) async throws -> String {
            let output = try await TracingProcessTests.rescind(arguments, as: name, in: scratch, grantURL: grantURL, receiver: receiver)
            try #require(output.status == 0, "\(arguments.first ?? "") failed: \(output)")
            return output.stdout
        }
    }
}
