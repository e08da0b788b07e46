import Foundation
import RescindDevKit
import RescindProtocol
import RescindTestSupport
import Testing

/// The whole system as separate processes: `rescind-dev demo` starts the grant service,
/// the audit service and five device agents on the local stack and plays the
/// guide's story; this test checks what the story proves.
@Suite(.serialized) struct DemoEndToEndTests {
    static let environment = ProcessInfo.processInfo.environment
    static let stackIsUp = environment["RESCIND_DATABASE_URL"] != nil && environment["RESCIND_KAFKA_BOOTSTRAP_SERVERS"] != nil
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    /// The executables sit beside the test bundle in the build directory.
    static let binaries = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()

    @Test(
        "the demo's story holds on real processes",
        .enabled(if: stackIsUp, "needs the local stack: run scripts/test.sh"),
        .timeLimit(.minutes(5)))
    func demoStory() async throws {
        let rescindDev = Self.binaries.appendingPathComponent("rescind-dev")
        try #require(FileManager.default.isExecutableFile(atPath: rescindDev.path), "build the products first (swift build)")
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("rescind-e2e-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: state) }
        // Ports the kernel picks (and the demo's schemas named after the grant port): engineers'
        // runs, and a second pass while the first one's stack is up, no longer collide.
        let grantPort = try FreePort.next()
        var auditPort = try FreePort.next()
        while auditPort == grantPort { auditPort = try FreePort.next() }
        let topicPrefix = "e2e-demo-\(UUID().uuidString.prefix(8).lowercased())."
        let arguments = [
            "demo", "--records", "120", "--grant-port", String(grantPort), "--audit-port", String(auditPort), "--ack-deadline", "4",
            "--root", Self.repository.path, "--state-directory", state.path, "--topic-prefix", topicPrefix,
        ]
        // Traced: every process the demo starts exports its spans to a collector of the test's.
        let collector = try await OTLPReceiver.start()
        var environment = Self.environment
        environment["RESCIND_OTEL_EXPORTER_OTLP_ENDPOINT"] = collector.endpoint.absoluteString
        // Bounded below the test's time limit, so a demo that hangs fails here with its timeline.
        let result = try await ChildProcess.run(
            rescindDev, arguments, environment: environment, directory: Self.repository, timeout: .seconds(200))
        _ = try await ChildProcess.run(
            rescindDev, ["demo", "--down", "--root", Self.repository.path, "--state-directory", state.path], directory: Self.repository,
            timeout: .seconds(60))
        let spans = collector.spans
        let exported = collector.rawBodies
        await collector.stop()
        try? await TestDatabases.dropSchemas(
            ["demo_grant_\(grantPort)", "demo_audit_\(grantPort)"], url: Self.environment["RESCIND_DATABASE_URL"] ?? "")
        let (status, output) = (result.status, result.output)
        #expect(!result.timedOut, "rescind-dev demo still running after 200 s:\n\(output.suffix(3000))")
        #expect(status == 0, "rescind-dev demo failed:\n\(output.suffix(3000))")
        let expectations = [
            "all 6 agents hold Emma v1 (120 records",
            "ack secure_deletion → erased: 120 records",
            "ack fmk_rotation → rotated to FMK v2: 120 records",
            "revocation complete on 6 devices",
            // The stolen phone: retired, B's identity rotated, codes compared, re-granted to the new keys.
            "retired Adult B's iPhone from the laptop",
            "rotated identity keys on the laptop (`rescind identity rotate --recovery`): generation 2",
            "re-granted Emma to Adult B's new keys at FMK v3",
            "re-granted Liam to Adult B's new keys at FMK v2",
            "holds Emma v3 (120 records) under Adult B's new keys",
            "the stolen iPhone asks for Emma's key → 401 device_retired",
            "tries to enrol a device with the stolen identity key → 401 device_retired",
            "→ 403 access_revoked",
            "opens 0 of 120 current records",
            "ALERT ack overdue from Adult A's iPad",
            // Back online, it heals by version check and then answers the commands it missed (fetched
            // from the grant service at check-in) `healed`, whether or not Kafka still had them.
            "Adult A's iPad: healed (late)",
            // A compromised grant service forges C's wrapped key: C's client refuses it against A's
            // signed key statement, and the audit service announces C's report.
            "refused the key history of family member",
            "refused a key history: wrapped_key_mismatch",
            "Adult C's client reads Emma again: 120 records",
            // The same service swaps Adult B's key before A's next revocation: A's client wraps only
            // to keys it verified, abandons the revocation, and the audit service announces A's report.
            "refused to wrap Emma's new FMK to a key it never verified (unverified_recipient_key)",
            "refused a recipient key: unverified_recipient_key",
            "Emma is still at FMK v3, and no copy of it was ever wrapped to the attacker's key",
            // A thief with A's unlocked iPhone rotates A's identity first: it only waits; A's iPad
            // hears of it at once (its agent, on device_commands; the audit service on its stream)
            // and vetoes it, and A recovers with the recovery words, still owning Emma.
            "vouched for the iPad with the recovery words",
            "begins rotating Adult A's identity from the stolen iPhone → pending until",
            "hears of it on device_commands after",
            "ALERT governance: rotate identity begun by Adult A's iPhone, pending until",
            "governance: rotate identity vetoed (Adult A's iPad)",
            "vetoes it (`rescind-agent veto`): it never takes effect, and the iPhone is frozen",
            "tries again → 403 device_frozen",
            "rotates the identity on the iPad with the recovery words (approved at once): generation 2",
            "rotated Emma → FMK v4, 120 records",
            "rotated Liam → FMK v3, 50 records",
            "still owns Emma and Liam",
        ]
        for expected in expectations {
            #expect(output.contains(expected), "missing from the demo's timeline: \(expected)")
        }
        try await Self.expectEveryMessageMatchesTheSchemas(topicPrefix: topicPrefix, in: state)
        try Self.expectOneTrace(of: output, in: spans, exported: exported)
        Self.expectTheLateAnswersLinkToTheirRevocations(in: spans)

        // The monitoring page needs the operator token: the demo says where it is, never what it is.
        let tokenFile = state.appendingPathComponent("keys/audit-operator.token")
        #expect(output.contains("sign in with the operator token in \(tokenFile.path)"), "\(output.suffix(1500))")
        let attributes = try FileManager.default.attributesOfItem(atPath: tokenFile.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let token = try String(contentsOf: tokenFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(token.count >= 32 && !output.contains(token))
    }

    /// The first revocation as one trace across five kinds of process, in the order of the
    /// diagram in docs/decisions/tracing.md: the demo's client (`revoke` → `revocation` → `commit`
    /// → its HTTP request), the grant service (the commit's server span → `relay publish`), each
    /// device's agent (`command received` → `fmk rotation` or `secure deletion` → `ack
    /// published`), and the audit service (`revocation event recorded`, `ack recorded`,
    /// `revocation completed` and the `relay publish` of its notification under the message that
    /// completed it). Nothing exported names a user,
    /// a device or a family member.
    static func expectOneTrace(of output: String, in spans: [[String: Any]], exported: [String]) throws {
        let line = try #require(output.split(separator: "\n").first { $0.contains("trace ") && $0.contains("every device's ack") })
        let traceID = try #require(line.firstMatch(of: /trace ([0-9a-f]{32})/)?.1).description
        let trace = spans.filter { $0["traceId"] as? String == traceID }
        func named(_ name: String) -> [[String: Any]] { trace.filter { $0["name"] as? String == name } }
        func children(of parents: [[String: Any]], named name: String) -> [[String: Any]] {
            let ids = Set(parents.compactMap { $0["spanId"] as? String })
            return named(name).filter { ($0["parentSpanId"] as? String).map(ids.contains) == true }
        }
        let summary = trace.map { "\($0["service"] ?? "")/\($0["name"] ?? "")" }.sorted()
        let root = named("revoke")
        #expect(root.count == 1 && root.first?["parentSpanId"] == nil && root.first?["service"] as? String == "rescind-dev demo", "\(summary)")
        let revocation = children(of: root, named: "revocation")
        let commit = children(of: revocation, named: "commit")
        let request = children(of: commit, named: "HTTP POST")
        let served = trace.filter { ($0["name"] as? String)?.hasPrefix("POST /v1/revocations/") == true && $0["service"] as? String == "rescind-grant-service" }
            .filter { ($0["parentSpanId"] as? String).map(Set(request.compactMap { $0["spanId"] as? String }).contains) == true }
        #expect(revocation.count == 1 && commit.count == 1 && request.count == 1 && served.count == 1, "\(summary)")
        for step in ["fetch key", "download", "re-encrypt", "upload"] {
            #expect(children(of: revocation, named: step).count == 1, "no \(step) span under the revocation: \(summary)")
        }
        let published = children(of: served, named: "relay publish")
        #expect(published.count >= 2 && published.allSatisfy { $0["kind"] as? Int == 4 }, "\(summary)")
        let received = children(of: published, named: "command received")
        let handled = children(of: received, named: "fmk rotation") + children(of: received, named: "secure deletion")
        let acked = children(of: handled, named: "ack published")
        let recorded = children(of: acked, named: "ack recorded")
        // Every agent of the story's six answered within the trace, each from its own process.
        for (spans, what) in [(received, "received"), (handled, "handled"), (acked, "acked")] {
            let agents = Set(spans.filter { $0["service"] as? String == "rescind-agent" }.compactMap { $0["instance"] as? String })
            #expect(agents.count == 6, "\(agents.count) agents \(what) the first revocation's command in its trace: \(summary)")
        }
        #expect(!children(of: received, named: "secure deletion").isEmpty && !children(of: received, named: "fmk rotation").isEmpty)
        #expect(recorded.count >= 6 && recorded.allSatisfy { $0["service"] as? String == "rescind-audit-service" }, "\(summary)")
        let event = children(of: published, named: "revocation event recorded")
        #expect(event.count >= 1, "\(summary)")
        // Completed by the last ack, or by the event itself when every ack came first (held).
        let completed = children(of: recorded + event, named: "revocation completed")
        #expect(completed.count == 1, "\(summary)")
        // `revocation_completed` goes out on audit_notifications in the trace too, under the
        // message that completed the revocation.
        let notified = children(of: recorded + event, named: "relay publish")
        #expect(
            notified.count == 1 && notified.first?["service"] as? String == "rescind-audit-service"
                && notified.first?["parentSpanId"] as? String == completed.first?["parentSpanId"] as? String, "\(summary)")
        if let completed = completed.first, let start = (completed["startTimeUnixNano"] as? String).flatMap(UInt64.init),
            let end = (completed["endTimeUnixNano"] as? String).flatMap(UInt64.init)
        {
            #expect(end > start, "the completion spans the commit to the last ack")
        }
        for body in exported {
            let id = body.firstMatch(of: /[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}/)
            #expect(id == nil, "an id in an exported span: \(body.prefix(2000))")
        }
    }

    /// The iPad that was offline answers `healed`. A command it read from Kafka when it came back
    /// is handled in its revocation's trace; one it fetched at check-in first starts a trace of
    /// its own at a `command fetched` span that links to the revocation's trace, and is handled under it.
    static func expectTheLateAnswersLinkToTheirRevocations(in spans: [[String: Any]]) {
        // The traces of the client's revocations (under a `revoke` command, or at their root).
        let revocations = Set(
            spans.filter { $0["name"] as? String == "revocation" && $0["service"] as? String == "rescind-dev demo" }
                .compactMap { $0["traceId"] as? String })
        let healed = spans.filter { span in
            span["service"] as? String == "rescind-agent"
                && (span["attributes"] as? [[String: Any]] ?? []).contains {
                    $0["key"] as? String == "rescind.outcome" && ($0["value"] as? [String: Any])?["stringValue"] as? String == "healed"
                }
        }
        #expect(!healed.isEmpty, "no healed answer traced: \(spans.map { $0["name"] ?? "" })")
        for span in healed {
            guard let trace = span["traceId"] as? String, !revocations.contains(trace) else { continue }
            let fetched = spans.first { $0["spanId"] as? String == span["parentSpanId"] as? String && $0["traceId"] as? String == trace }
            let links = (fetched?["links"] as? [[String: Any]] ?? []).compactMap { $0["traceId"] as? String }
            let roots = spans.filter { links.contains($0["traceId"] as? String ?? "") && $0["parentSpanId"] == nil }
                .map { "\($0["service"] ?? "")/\($0["name"] ?? "")" }
            #expect(
                fetched?["name"] as? String == "command fetched" && fetched?["parentSpanId"] == nil
                    && links.contains(where: revocations.contains),
                "a healed answer outside its revocation's trace, under \(fetched?["name"] ?? "nothing") linked to \(links): \(roots)")
        }
        // Only a command new to the device starts one: every agent checks in, and the commands it
        // read from Kafka already are no trace of their own.
        for fetched in spans where fetched["name"] as? String == "command fetched" {
            #expect(
                spans.contains { $0["parentSpanId"] as? String == fetched["spanId"] as? String },
                "a `command fetched` span with nothing under it: \(fetched)")
        }
    }

    /// The contract an outside consumer reads: every message the demo's processes put on each
    /// topic, read back with `rescind-admin tail --until-end` and validated against `schemas/` by
    /// an independent validator (Python jsonschema, `scripts/validate-messages.py`). Each kind the
    /// story publishes must have been seen; it publishes every kind but two (a reissued command,
    /// and an agent's key chain report: its refusals are the CLI's, reported over HTTPS).
    static func expectEveryMessageMatchesTheSchemas(topicPrefix: String, in state: URL) async throws {
        let directory = state.appendingPathComponent("messages")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var environment = environment
        environment["RESCIND_TOPIC_PREFIX"] = topicPrefix
        for topic in Topic.allCases {
            let tail = try await ChildProcess.run(
                binaries.appendingPathComponent("rescind-admin"), ["tail", topic.rawValue, "--json", "--from-beginning", "--until-end"],
                environment: environment, directory: repository, timeout: .seconds(60), separateOutput: true)
            #expect(tail.status == 0 && !tail.timedOut, "tail \(topic.rawValue): \(tail.stderr.suffix(1000))")
            #expect(!tail.stdout.isEmpty, "the demo put nothing on \(topic.rawValue)")
            try Data(tail.stdout.utf8).write(to: directory.appendingPathComponent("\(topic.rawValue).jsonl"))
        }
        let python = URL(fileURLWithPath: environment["RESCIND_TEST_PYTHON"] ?? "/usr/bin/python3")
        let schemas = [
            RevocationEvent.schema, AccessEvent.schema, DeviceCommand.schema, GovernanceNotice.schema, DeviceAck.schema,
            AuditNotification.schema,
        ]
        let validation = try await ChildProcess.run(
            python, ["scripts/validate-messages.py", "schemas", directory.path, "--require"] + schemas, environment: environment,
            directory: repository, timeout: .seconds(120))
        #expect(
            validation.status == 0,
            "the demo's messages against schemas/ (python: \(python.path); scripts/test.sh installs jsonschema):\n\(validation.output.suffix(4000))")

        // The validator fails closed: one of those events with a field of the wrong type.
        let events = try String(contentsOf: directory.appendingPathComponent("revocation_events.jsonl"), encoding: .utf8)
        var event = try #require(try JSONSerialization.jsonObject(with: Data(events.prefix { $0 != "\n" }.utf8)) as? [String: Any])
        var payload = try #require(event["payload"] as? [String: Any])
        payload["new_fmk_version"] = "two"
        event["payload"] = payload
        let tampered = state.appendingPathComponent("tampered")
        try FileManager.default.createDirectory(at: tampered, withIntermediateDirectories: true)
        try JSONSerialization.data(withJSONObject: event).write(to: tampered.appendingPathComponent("revocation_events.jsonl"))
        let refused = try await ChildProcess.run(
            python, ["scripts/validate-messages.py", "schemas", tampered.path], environment: environment, directory: repository,
            timeout: .seconds(120))
        #expect(refused.status == 1 && refused.output.contains("new_fmk_version"), "\(refused.output.suffix(2000))")
    }
}
