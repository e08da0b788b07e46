import AuditService
import Foundation
import RescindTestSupport
import Testing

/// What the people watching the event stream read on the audit service's `/metrics`: the
/// consumer group's lag in messages per input partition (from the broker's committed offsets and
/// high watermarks), whether the database and the brokers answer, and its HTTP requests as the
/// grant service counts them.
@Suite struct AuditObservabilityTests {
    static func metricLines(_ bed: AuditTestBed) async throws -> [String] {
        String(decoding: try await bed.get("/metrics").body, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    @Test func consumerLagReachabilityAndRequestsAreExported() async throws {
        try await AuditTestBed.with({ $0.probeInterval = .milliseconds(200) }) { bed in
            let emma = TestFamily()
            for _ in 0..<3 { try await bed.publish(emma.accessEvent(.accessGranted, target: UUID())) }
            try await bed.eventually("three entries") { try await bed.count("SELECT count(*) FROM audit_log") == 3 }

            // One replica owns every partition of the three input topics; all committed: 0 behind.
            let partitions = 3 * Int(AuditServiceHarness.partitions)
            try await bed.eventually("the lag of every input partition, at 0") {
                let lag = try await Self.metricLines(bed).filter { $0.hasPrefix("rescind_audit_consumer_lag_messages{") }
                return lag.count == partitions && lag.allSatisfy { $0.hasSuffix(" 0.0") }
            }
            let lines = try await Self.metricLines(bed)
            #expect(lines.contains(#"rescind_audit_consumer_lag_messages{topic="access_events",partition="0"} 0.0"#), "\(lines)")
            #expect(lines.contains("rescind_database_up 1.0") && lines.contains("rescind_broker_up 1.0"))

            // Requests as the grant service counts them: by route, method and status, errors apart.
            #expect(try await bed.get("/v1/revocations").status == 401)
            try await bed.eventually("the requests counted") {
                let lines = try await Self.metricLines(bed)
                return lines.contains(#"hb_requests{http_route="/v1/revocations",http_request_method="GET",http_response_status_code="401"} 1"#)
                    && lines.contains(#"hb_request_errors{http_route="/v1/revocations",http_request_method="GET",error_type="401"} 1"#)
                    && lines.contains { $0.hasPrefix(#"hb_requests{http_route="/metrics",http_request_method="GET",http_response_status_code="200"}"#) }
                    && lines.contains { $0.hasPrefix("http_server_request_duration_bucket{") }
            }

            // The brokers stop answering (the development cluster's only broker down): the probe says
            // so. Not on an external broker (the suite's Tansu pass), which the test cannot stop.
            guard bed.configuration.kafka.bootstrapServers == bed.cluster.bootstrapServers else { return }
            let broker = bed.cluster.brokerIDs.lowerBound
            try await bed.cluster.setBrokerDown(broker)
            try await bed.eventually("rescind_broker_up 0.0", timeout: .seconds(30)) {
                try await Self.metricLines(bed).contains("rescind_broker_up 0.0")
            }
            try await bed.cluster.setBrokerUp(broker)
            try await bed.eventually("rescind_broker_up 1.0", timeout: .seconds(30)) {
                try await Self.metricLines(bed).contains("rescind_broker_up 1.0")
            }
        }
    }
}
