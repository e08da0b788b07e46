import Foundation
import RescindClient
import RescindCrypto
import RescindObservability
import RescindProtocol
import RescindTestSupport
import Testing

/// Health, readiness, metrics, the service key, unknown routes and body limits.
@Suite struct OperationsTests {
    @Test func healthReadinessAndServiceKey() async throws {
        try await GrantServiceHarness.with { service in
            let http = service.http
            let health = try await http.send("GET", "health")
            #expect(health.status == 200 && health.text == #"{"status":"ok"}"#)
            let ready = try await http.send("GET", "ready")
            #expect(ready.status == 200 && ready.text == #"{"status":"ready"}"#)
            let key = try await GrantServiceClient(baseURL: service.baseURL, tls: service.clientTLS).serviceKey()
            #expect(key.signingPublicKey == Data(service.serviceKey.rawRepresentation))

            expectError(try await http.send("GET", "v1/nothing-here"), 404, "not_found")
            expectError(try await http.send("GET", "v2/me"), 404, "not_found")
        }
    }

    /// A grant service started before its topics exist is alive but not ready, says
    /// why, and becomes ready once they are created (no restart).
    @Test func notReadyUntilItsTopicsExist() async throws {
        try await GrantServiceHarness.with(createTopics: false) { service in
            let http = service.http
            #expect(try await http.send("GET", "health").status == 200)
            let waiting = try await http.send("GET", "ready")
            #expect(waiting.status == 503, "\(waiting.text)")
            #expect(waiting.text.contains("topics_missing") && waiting.text.contains("\(service.topicPrefix)device_commands"), "\(waiting.text)")
            #expect(waiting.text.contains("rescind-admin migrate kafka"), "\(waiting.text)")
            try await service.createTopics()
            let ready = try await http.send("GET", "ready")
            #expect(ready.status == 200 && ready.text == #"{"status":"ready"}"#, "\(ready.text)")
        }
    }

    @Test func metricsCountRevocations() async throws {
        try await GrantServiceHarness.with { service in
            let home = try await Household.make(service, records: 4)
            _ = try await home.adultA.revoke(home.emma, user: home.adultC.keys.userID)
            try await service.eventually("the relay publishes") {
                try await service.count("SELECT count(*) FROM outbox WHERE sent_at IS NULL") == 0
            }
            let metrics = try await service.http.send("GET", "metrics")
            #expect(metrics.status == 200)
            #expect(metrics.contentType?.hasPrefix("text/plain") == true)
            let values = Self.samples(metrics.text)
            // The registry is shared by every service in this process, hence "at least".
            #expect((values["rescind_revocations_committed_total"] ?? 0) >= 1)
            #expect((values["rescind_records_reencrypted_total"] ?? 0) >= 4)
            #expect((values["rescind_outbox_published_total"] ?? 0) >= 3 + 1 + 3)
            #expect(values["rescind_outbox_lag_seconds"] != nil)
            #expect(metrics.text.contains("http_server_request_duration"))
            #expect(metrics.text.contains(#"rescind_build_info{version="\#(RescindVersion.current)"} 1"#), "the build's version")
        }
    }

    /// `name value` lines of the Prometheus text format, labels dropped and summed.
    static func samples(_ text: String) -> [String: Double] {
        var values: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: " ")
            guard parts.count >= 2, let value = Double(parts[1]) else { continue }
            let name = String(parts[0].prefix { $0 != "{" })
            values[name, default: 0] += value
        }
        return values
    }

    @Test func requestBodiesAreLimited() async throws {
        try await GrantServiceHarness.with({ $0.http.maxUploadBytes = 4 << 20 }) { service in
            let home = try await Household.make(service, records: 0)
            let http = service.http
            let token = try await home.adultA.token()
            let oversized = Data(#"{"padding":""#.utf8) + Data(repeating: UInt8(ascii: "x"), count: 1 << 20) + Data(#""}"#.utf8)
            let id = UUID()
            let routes: [(String, String, Bool)] = [
                ("POST", "v1/users", false), ("POST", "v1/auth/challenge", false), ("POST", "v1/auth/token", false),
                ("POST", "v1/devices", true), ("POST", "v1/family-members", true),
                ("PUT", "v1/family-members/\(home.emma)/key", true), ("POST", "v1/family-members/\(home.emma)/grants", true),
                ("POST", "v1/family-members/\(home.emma)/ownership", true),
                ("PUT", "v1/family-members/\(home.emma)/records/\(id)", true),
                ("POST", "v1/family-members/\(home.emma)/revocations", true),
                ("POST", "v1/users/\(home.adultC.keys.userID)/revocations", true),
                ("POST", "v1/revocations/\(id)/commit", true),
            ]
            for (method, path, authenticated) in routes {
                expectError(
                    try await http.send(method, path, token: authenticated ? token : nil, body: oversized), 413,
                    "payload_too_large")
            }

            // The upload route takes more than the ordinary limit, up to its own.
            _ = try await service.seedRecords(home.emma, count: 1500, plaintextBytes: 1000, fmk: home.fmk)
            let revocation = try await home.adultA.client.beginRevocation(
                home.emma, BeginRevocationRequest(revokedUserID: home.adultC.keys.userID))
            let (records, _, _) = try await home.adultA.reencrypt(revocation)
            let batch = try CanonicalJSON.encode(UploadBatchRequest(records: records))
            #expect(batch.count > 2 << 20 && batch.count < 4 << 20)
            let path = "v1/revocations/\(revocation.revocationID)/records"
            let accepted = try await http.send("PUT", path, token: token, body: batch)
            #expect(accepted.status == 200, "\(accepted.text)")
            #expect(try accepted.decode(UploadBatchResponse.self).totalStaged == 1500)
            let tooLarge = try CanonicalJSON.encode(UploadBatchRequest(records: records + records))
            #expect(tooLarge.count > 4 << 20)
            expectError(try await http.send("PUT", path, token: token, body: tooLarge), 413, "payload_too_large")
        }
    }
}
