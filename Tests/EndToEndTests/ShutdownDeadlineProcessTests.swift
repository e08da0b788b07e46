import Foundation
import RescindDevKit
import Testing

/// The fault: a service's database stops answering (a network partition, a frozen host: its
/// connections stay open and no reset ever comes; played by SIGSTOP to a throwaway cluster's
/// postmaster and backends), and the operator, or the orchestrator, sends SIGTERM. Before the
/// bound, the service waited for ever on the query in hand and never exited. Promise: a service
/// still exits within its grace period (`RESCIND_SHUTDOWN_GRACE_SECONDS`), with
/// `ShutdownDeadline.exitStatus` (3) and one line that says why; with the database answering,
/// SIGTERM ends it cleanly (0) and the bound never fires. Real processes, real PostgreSQL.
@Suite(.serialized) struct ShutdownDeadlineProcessTests {
    static let hasPostgres = ThrowawayPostgres.findBinaries() != nil
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let gaveUp = "graceful shutdown did not finish within the grace period; exiting"

    @Test(
        .enabled(if: hasPostgres, "needs PostgreSQL's server programs (initdb)"), .timeLimit(.minutes(5)),
        arguments: ["rescind-grant-service", "rescind-audit-service"])
    func aServiceWhoseDatabaseStoppedAnsweringStillExitsOnSIGTERM(program: String) async throws {
        try await Self.onThrowawayCluster("shutdown") { postgres, cluster, scratch, started in
            try await Self.play(program, postgres: postgres, cluster: cluster, scratch: scratch, started: &started)
        }
    }

    /// Runs `play` with a throwaway PostgreSQL cluster (which a test may freeze), a development
    /// Kafka cluster and a scratch directory; records what `play` throws with the tails of the
    /// processes it started, then kills them, thaws and removes the cluster and the scratch.
    static func onThrowawayCluster(
        _ label: String,
        _ play: (ThrowawayPostgres, DevelopmentCluster, URL, inout [ChildProcess]) async throws -> Void
    ) async throws {
        let postgres = try await throwawayPostgres()
        let cluster = try DevelopmentCluster()
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("rescind-\(label)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        var started: [ChildProcess] = []
        do {
            try await play(postgres, cluster, scratch, &started)
        } catch {
            Issue.record(error, "\(started.map { "\($0.name) (running: \($0.isRunning)): \($0.logTail(lines: 40))" })")
        }
        for process in started { process.killGroup() }
        _ = postgres.thaw()
        await postgres.stop()
        postgres.remove()
        cluster.shutdown()
        try? FileManager.default.removeItem(at: scratch)
    }

    static func play(
        _ program: String, postgres: ThrowawayPostgres, cluster: DevelopmentCluster, scratch: URL, started: inout [ChildProcess]
    ) async throws {
        var environment = try await environment(program, postgres: postgres, cluster: cluster, scratch: scratch)
        // The subject is the shutdown bound: the client-side deadline on database calls
        // (`FrozenDatabaseProcessTests`) would end the stuck query first, so it is set far off.
        environment["RESCIND_DATABASE_TIMEOUT_SECONDS"] = "120"

        // The database answers: SIGTERM ends the service cleanly (0), the bound never fires (a
        // generous one here, so that a loaded machine's slow but clean shutdown is not mistaken).
        var calm = environment
        calm["RESCIND_SHUTDOWN_GRACE_SECONDS"] = "20"
        let healthy = try await start(program, environment: calm, log: scratch.appendingPathComponent("healthy.log"))
        started.append(healthy)
        healthy.signal(SIGTERM)
        let cleanly = await healthy.waitForExit(timeout: .seconds(30))
        #expect(cleanly == 0, "\(program) after SIGTERM with its database up: \(healthy.logTail(lines: 20))")
        #expect(!healthy.text.contains(gaveUp))

        // The database stops answering while the service polls it; then SIGTERM.
        let stuck = try await start(program, environment: environment, log: scratch.appendingPathComponent("frozen.log"))
        started.append(stuck)
        #expect(!postgres.freeze().isEmpty)
        try await Task.sleep(for: .seconds(2))  // the outbox poll (every 100 ms) now waits on a query
        let signalled = ContinuousClock.now
        stuck.signal(SIGTERM)
        let status = await stuck.waitForExit(timeout: .seconds(30))
        let took = ContinuousClock.now - signalled
        postgres.thaw()
        #expect(status == 3, "\(program) with its database frozen: \(stuck.logTail(lines: 20))")
        #expect(stuck.text.contains(gaveUp), "\(stuck.logTail(lines: 20))")
        #expect(took >= .seconds(2) && took < .seconds(20), "exited \(took) after SIGTERM, grace 3 s")
    }

    struct NotStarted: Error, CustomStringConvertible {
        let description: String
    }

    /// A cluster of its own on a free loopback port (a taken one is tried again).
    static func throwawayPostgres() async throws -> ThrowawayPostgres {
        let binaries = try #require(ThrowawayPostgres.findBinaries())
        var lastError: (any Error)?
        for _ in 0..<5 {
            do {
                return try await ThrowawayPostgres.start(port: Int.random(in: 41_000...48_999), binaries: binaries)
            } catch {
                lastError = error
            }
        }
        throw lastError!
    }

    static func environment(
        _ program: String, postgres: ThrowawayPostgres, cluster: DevelopmentCluster, scratch: URL
    ) async throws -> [String: String] {
        try await environment(program, databaseURL: postgres.url, cluster: cluster, scratch: scratch)
    }

    /// What `program` needs to run on `databaseURL` and `cluster`, in a schema and topics of its own.
    static func environment(
        _ program: String, databaseURL: String, cluster: DevelopmentCluster, scratch: URL
    ) async throws -> [String: String] {
        let suffix = UUID().uuidString.prefix(8).lowercased()
        var environment = [
            "PATH": "/usr/bin:/bin", "RESCIND_DATABASE_URL": databaseURL, "RESCIND_LOG_LEVEL": "info",
            "RESCIND_KAFKA_BOOTSTRAP_SERVERS": cluster.bootstrapServers, "RESCIND_TOPIC_PREFIX": "s\(suffix).",
            "RESCIND_KAFKA_TOPICS_AUTO_CREATED": "true", "RESCIND_SHUTDOWN_GRACE_SECONDS": "3",
        ]
        if program == "rescind-grant-service" {
            environment.merge([
                "RESCIND_GRANT_HOST": "127.0.0.1", "RESCIND_GRANT_PORT": "0", "RESCIND_GRANT_DB_SCHEMA": "grant_\(suffix)",
                "RESCIND_GRANT_MIGRATIONS_DIR": root.appendingPathComponent("migrations/grant").path,
                "RESCIND_GRANT_SIGNING_KEY_FILE": scratch.appendingPathComponent("grant.key").path,
                "RESCIND_GRANT_CREATE_SIGNING_KEY": "true", "RESCIND_OUTBOX_POLL_MS": "100",
            ]) { $1 }
        } else {
            let grantKey = scratch.appendingPathComponent("grant.key")
            let token = scratch.appendingPathComponent("operator.token")
            let generated = try await RescindProcess.admin(["keys", "generate", grantKey.path])
            try #require(generated.status == 0, "\(generated)")
            let tokenMade = try await RescindProcess.admin(["keys", "token", token.path])
            try #require(tokenMade.status == 0, "\(tokenMade)")
            environment.merge([
                "RESCIND_AUDIT_HOST": "127.0.0.1", "RESCIND_AUDIT_PORT": "0", "RESCIND_AUDIT_DB_SCHEMA": "audit_\(suffix)",
                "RESCIND_AUDIT_MIGRATIONS_DIR": root.appendingPathComponent("migrations/audit").path,
                "RESCIND_AUDIT_SIGNING_KEY_FILE": scratch.appendingPathComponent("audit.key").path,
                "RESCIND_AUDIT_CREATE_SIGNING_KEY": "true", "RESCIND_AUDIT_OPERATOR_TOKEN_FILE": token.path,
                "RESCIND_GRANT_SERVICE_PUBLIC_KEY": generated.stdout.trimmingCharacters(in: .whitespacesAndNewlines),
                "RESCIND_AUDIT_OUTBOX_POLL_MS": "100", "RESCIND_AUDIT_SCAN_INTERVAL_MS": "100",
            ]) { $1 }
        }
        return environment
    }

    /// Starts `program` and waits until it listens.
    static func start(_ program: String, environment: [String: String], log: URL) async throws -> ChildProcess {
        let executable = RescindProcess.binary.deletingLastPathComponent().appendingPathComponent(program)
        let process = try ChildProcess(name: program, executable: executable, environment: environment, output: .file(log))
        let deadline = ContinuousClock.now + .seconds(90)
        while !process.text.contains("service listening") {
            guard process.isRunning, ContinuousClock.now < deadline else {
                process.killGroup()
                throw NotStarted(description: "\(program) did not start: \(process.logTail(lines: 20))")
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        return process
    }
}
