import Foundation
import RescindDevKit
import RescindProtocol
import RescindTLS
import RescindTestSupport
import Testing

/// Two grant services and two audit services as their own processes (the dev kit's
/// `ServiceProcesses`, the executables built next to the tests), each pair on one PostgreSQL
/// schema, one signing key and one consumer group, all on one development cluster in this
/// process: the scale-out docs/operations.md promises, with processes a test can kill with SIGKILL.
enum ScaleOutStack {
    static let partitions: Int32 = 4
    static let clientTLS = ClientTLS(plainHTTP: .loopback)

    /// Starts everything, runs `body` with the services and their cluster, and always stops and
    /// removes everything. `auditEnvironment` adds to (or overrides) the audit services' settings.
    static func with<Result>(
        grants: Int = 2, audits: Int = 2, auditEnvironment: [String: String] = [:],
        _ body: (ServiceProcesses, DevelopmentCluster) async throws -> Result
    ) async throws -> Result {
        let suffix = UUID().uuidString.prefix(8).lowercased()
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("rescind-scaleout-\(suffix)")
        let cluster = try DevelopmentCluster()
        defer {
            cluster.shutdown()
            try? FileManager.default.removeItem(at: work)
        }
        let prefix = "s\(suffix)."
        for topic in Topic.allCases {
            _ = try await cluster.createTopic(name: prefix + topic.rawValue, partitions: partitions)
        }
        let configuration = ServiceProcesses.Configuration(
            repository: GrantServiceHarness.repositoryRoot,
            binaries: URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(), work: work,
            databaseURL: GrantServiceHarness.databaseURL, bootstrapServers: cluster.bootstrapServers, topicPrefix: prefix,
            grantSchema: "grant_scaleout_\(suffix)", auditSchema: "audit_scaleout_\(suffix)", auditGroup: "audit-scaleout-\(suffix)",
            grants: grants, audits: audits,
            grantEnvironment: [
                "RESCIND_OUTBOX_POLL_MS": "200",
                // A killed relay's claim passes to the survivor quickly.
                "RESCIND_OUTBOX_CLAIM_LEASE_SECONDS": "5",
            ],
            auditEnvironment: [
                "RESCIND_AUDIT_KAFKA_SESSION_TIMEOUT_MS": "3000", "RESCIND_AUDIT_KAFKA_HEARTBEAT_MS": "300",
                "RESCIND_KAFKA_FETCH_WAIT_MS": "50", "RESCIND_AUDIT_OUTBOX_POLL_MS": "200",
                "RESCIND_AUDIT_OUTBOX_CLAIM_LEASE_SECONDS": "5", "RESCIND_AUDIT_SCAN_INTERVAL_MS": "200",
            ].merging(auditEnvironment) { $1 })
        let services: ServiceProcesses
        do {
            services = try await ServiceProcesses.start(configuration)
        } catch {
            // The first grant service may have migrated its schema before another failed.
            try? await TestDatabases.dropSchemas([configuration.grantSchema, configuration.auditSchema], url: configuration.databaseURL)
            throw error
        }
        do {
            let result = try await body(services, cluster)
            await services.stop()
            await services.dropSchemas()
            return result
        } catch {
            Issue.record("logs:\n\(services.logTails())")
            await services.stop()
            await services.dropSchemas()
            throw error
        }
    }
}
