import AuditService
import Foundation
import RescindConfiguration
import RescindObservability
import RescindProtocol
import RescindTLS
import RescindTestSupport
import Testing

/// Health, readiness, metrics, configuration, and a graceful shutdown that commits offsets.
@Suite struct AuditOperationsTests {
    @Test func healthReadinessAndMetrics() async throws {
        try await AuditTestBed.with { bed in
            #expect(try await bed.get("/health").status == 200)
            let ready = try await bed.get("/ready")
            #expect(ready.status == 200 && String(decoding: ready.body, as: UTF8.self).contains("ready"))
            let key = try CanonicalJSON.decode(ServiceKeyResponse.self, from: try await bed.get("/v1/service-key").body)
            #expect([UInt8](key.signingPublicKey) == bed.service.auditKey.rawRepresentation)
            let missing = try await bed.get("/v1/revocations/\(UUID())", token: bed.operatorToken)
            #expect(missing.status == 404)
            #expect(try CanonicalJSON.decode(APIErrorBody.self, from: missing.body).error.code == "not_found")

            let emma = TestFamily()
            let phone = TestFamily.Device(userID: UUID())
            try await bed.publish(emma.revocation(of: phone.userID, devices: [phone]))
            try await bed.eventually("the pending gauge") {
                String(decoding: try await bed.get("/metrics").body, as: UTF8.self).contains("rescind_audit_pending_acks 1")
            }
            let metrics = String(decoding: try await bed.get("/metrics").body, as: UTF8.self)
            for line in [
                #"rescind_audit_messages_consumed_total{topic="revocation_events"} 1"#,
                "rescind_audit_overdue_acks 0", "rescind_audit_open_revocations 1", "rescind_audit_log_entries_total 1",
                "# TYPE rescind_audit_commit_to_last_ack_seconds histogram",
                #"rescind_audit_consumer_lag_seconds{topic="revocation_events"}"#,
                #"rescind_build_info{version="\#(RescindVersion.current)"} 1"#,
                // Exported at 0 before any violation: the alert on one sees an increase.
                #"rescind_audit_key_chain_violations_total{verification="device_signature"} 0"#,
            ] {
                #expect(metrics.contains(line), "\(line)")
            }
        }
    }

    @Test func aGracefulShutdownCommitsWhatWasHandled() async throws {
        try await AuditTestBed.with { bed in
            let emma = TestFamily()
            for _ in 0..<5 { try await bed.publish(emma.accessEvent(.accessGranted, target: UUID())) }
            try await bed.eventually("five entries") { try await bed.count("SELECT count(*) FROM audit_log") == 5 }
            try await bed.restart()
            try await bed.publish(emma.accessEvent(.accessRegranted, target: UUID()))
            try await bed.eventually("the sixth entry", timeout: .seconds(30)) {
                try await bed.count("SELECT count(*) FROM audit_log") == 6
            }
            // The new instance read only the new message: the old offsets were committed.
            let metrics = String(decoding: try await bed.get("/metrics").body, as: UTF8.self)
            #expect(metrics.contains(#"rescind_audit_messages_consumed_total{topic="access_events"} 1"#))
        }
    }

    @Test func configurationComesFromTheEnvironment() throws {
        let configuration = try AuditServiceConfiguration(environment: [
            "RESCIND_AUDIT_PORT": "9090", "RESCIND_AUDIT_DB_SCHEMA": "audit_x", "RESCIND_TOPIC_PREFIX": "prod.",
            "RESCIND_KAFKA_BOOTSTRAP_SERVERS": "kafka:9092", "RESCIND_GRANT_SERVICE_URL": "https://grant:8443",
            "RESCIND_AUDIT_ACK_DEADLINE_SECONDS": "120", "RESCIND_AUDIT_CONSUMER_GROUP": "audit-eu",
        ])
        #expect(configuration.http.port == 9090)
        #expect(configuration.database.schema == "audit_x")
        #expect(configuration.kafka.topicPrefix == "prod." && configuration.kafka.bootstrapServers == "kafka:9092")
        #expect(configuration.kafka.consumerGroup == "audit-eu")
        #expect(configuration.grantService.url == "https://grant:8443" && configuration.grantService.publicKey == nil)
        #expect(configuration.grantService.tls == .strict)
        #expect(configuration.tracking.ackDeadline == .seconds(120))

        // Errors name the variable (ConfigurationError), never the value.
        let noKey = #expect(throws: (any Error).self) { try AuditServiceConfiguration(environment: [:]) }
        #expect("\(noKey.map { "\($0)" } ?? "")".hasPrefix("RESCIND_GRANT_SERVICE_PUBLIC_KEY"))
        let badSchema = #expect(throws: (any Error).self) {
            try AuditServiceConfiguration(environment: ["RESCIND_AUDIT_DB_SCHEMA": "x; DROP", "RESCIND_GRANT_SERVICE_URL": "https://g"])
        }
        let text = badSchema.map { "\($0)" } ?? ""
        #expect(text.hasPrefix("RESCIND_AUDIT_DB_SCHEMA") && !text.contains("DROP"))
    }

    /// The grant service is reached over HTTPS checked against RESCIND_CA_FILE; plain HTTP only to
    /// a loopback address, and only when RESCIND_ALLOW_PLAIN_HTTP=loopback says so.
    @Test func theGrantServiceURLMustBeHTTPS() throws {
        let withCA = try AuditServiceConfiguration(environment: [
            "RESCIND_GRANT_SERVICE_URL": "https://grant:8443", "RESCIND_CA_FILE": "/etc/rescind/ca.pem",
        ])
        #expect(withCA.grantService.tls.caFile == "/etc/rescind/ca.pem" && withCA.grantService.tls.plainHTTP == .refused)
        for environment in [
            ["RESCIND_GRANT_SERVICE_URL": "http://grant:8080"],
            ["RESCIND_GRANT_SERVICE_URL": "http://grant:8080", "RESCIND_ALLOW_PLAIN_HTTP": "loopback"],
            ["RESCIND_GRANT_SERVICE_URL": "http://127.0.0.1:8080"],
        ] {
            let error = #expect(throws: (any Error).self) { try AuditServiceConfiguration(environment: environment) }
            let text = error.map { "\($0)" } ?? ""
            #expect(text.hasPrefix("RESCIND_GRANT_SERVICE_URL: refusing plain HTTP"), "\(text)")
        }
        let loopback = try AuditServiceConfiguration(environment: [
            "RESCIND_GRANT_SERVICE_URL": "http://127.0.0.1:8080", "RESCIND_ALLOW_PLAIN_HTTP": "loopback",
        ])
        #expect(loopback.grantService.tls.plainHTTP == .loopback)
    }

    /// deploy/ pins the grant service's key from a mounted file: nothing fetches it.
    @Test func theGrantServiceKeyIsPinnedFromAFile() throws {
        let key = Data((0..<32).map { UInt8($0) })
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rescind-pin-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let raw = directory.appendingPathComponent("raw.pub"), text = directory.appendingPathComponent("text.pub")
        let bad = directory.appendingPathComponent("bad.pub")
        try key.write(to: raw)
        try Data((key.base64EncodedString() + "\n").utf8).write(to: text)
        try Data("not a key".utf8).write(to: bad)
        for file in [raw, text] {
            let configuration = try AuditServiceConfiguration(environment: ["RESCIND_GRANT_SERVICE_PUBLIC_KEY_FILE": file.path])
            #expect(configuration.grantService.publicKey == key.base64EncodedString())
        }
        for path in [bad.path, "/nonexistent/grant.pub"] {
            let error = #expect(throws: ConfigurationError.self) {
                try AuditServiceConfiguration(environment: ["RESCIND_GRANT_SERVICE_PUBLIC_KEY_FILE": path])
            }
            #expect(error?.variable == "RESCIND_GRANT_SERVICE_PUBLIC_KEY_FILE")
        }
    }

    @Test func theServiceAnswersHTTPSWithItsCertificate() async throws {
        try await AuditTestBed.with { bed in
            #expect(bed.service.baseURL.scheme == "https")
            let health = try await bed.get("/health")
            #expect(health.status == 200)
            let impostor = try await TestTLS.impostor()
            await #expect(throws: (any Error).self) {
                _ = try await TestHTTP.send(
                    "GET", bed.service.baseURL.appendingPathComponent("health"), tls: impostor.client, timeout: .seconds(3))
            }
        }
    }

    @Test func kafkaFetchWaitComesFromTheSharedVariable() throws {
        let base = ["RESCIND_GRANT_SERVICE_URL": "https://grant:8443"]
        // Unset (or empty): librdkafka keeps its own default.
        for environment in [base, base.merging(["RESCIND_KAFKA_FETCH_WAIT_MS": " "]) { $1 }] {
            #expect(try AuditServiceConfiguration(environment: environment).kafka.consumerProperties["fetch.wait.max.ms"] == nil)
        }
        for value in ["0", "25", "10000"] {
            let configuration = try AuditServiceConfiguration(
                environment: base.merging(["RESCIND_KAFKA_FETCH_WAIT_MS": value]) { $1 })
            #expect(configuration.kafka.consumerProperties == ["fetch.wait.max.ms": value])
        }
        for value in ["-1", "10001", "25ms", "fast"] {
            let error = #expect(throws: (any Error).self) {
                try AuditServiceConfiguration(environment: base.merging(["RESCIND_KAFKA_FETCH_WAIT_MS": value]) { $1 })
            }
            #expect("\(error.map { "\($0)" } ?? "")".hasPrefix("RESCIND_KAFKA_FETCH_WAIT_MS"), "\(value)")
        }
    }
}
