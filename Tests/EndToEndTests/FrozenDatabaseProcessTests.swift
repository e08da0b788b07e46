import Foundation
import RescindDevKit
import RescindPostgres
import RescindTestSupport
import Testing

/// The fault: the database stops answering while its TCP connections stay open (a partition,
/// a frozen host; played by SIGSTOP to a throwaway cluster's postmaster and backends). Before
/// the client-side deadline (`RESCIND_DATABASE_TIMEOUT_SECONDS`), a request and a relay pass
/// waited on it for ever. Promise: a request that needs the database answers 503
/// `database_unavailable` within the bound (plus the time to connect, itself bounded), the
/// outbox relay's pass gives up, logs and retries, and once the database thaws the service
/// answers again and the relay publishes and marks what was written, without a restart.
/// Meanwhile `/metrics` says so: `rescind_database_up` reads 0 while the database is silent
/// and 1 again after the thaw (what the `RescindDatabaseUnreachable` alert watches).
/// Real processes, real PostgreSQL.
@Suite(.serialized) struct FrozenDatabaseProcessTests {
    static let bound = 2

    @Test(
        .enabled(if: ShutdownDeadlineProcessTests.hasPostgres, "needs PostgreSQL's server programs (initdb)"),
        .timeLimit(.minutes(5)), arguments: ["rescind-grant-service", "rescind-audit-service"])
    func aFrozenDatabaseCostsA503WithinTheBoundAndHealsByItself(program: String) async throws {
        try await ShutdownDeadlineProcessTests.onThrowawayCluster("frozen") { postgres, cluster, scratch, started in
            try await Self.play(program, postgres: postgres, cluster: cluster, scratch: scratch, started: &started)
        }
    }

    static func play(
        _ program: String, postgres: ThrowawayPostgres, cluster: DevelopmentCluster, scratch: URL, started: inout [ChildProcess]
    ) async throws {
        var environment = try await ShutdownDeadlineProcessTests.environment(
            program, postgres: postgres, cluster: cluster, scratch: scratch)
        let grant = program == "rescind-grant-service"
        let port = try FreePort.next()
        environment[grant ? "RESCIND_GRANT_PORT" : "RESCIND_AUDIT_PORT"] = "\(port)"
        environment["RESCIND_DATABASE_TIMEOUT_SECONDS"] = "\(bound)"
        environment["RESCIND_PROBE_INTERVAL_SECONDS"] = "1"
        // Reopening a connection is bounded the same (the throwaway URL sets connect_timeout=5).
        environment["RESCIND_DATABASE_URL"] = postgres.url.replacingOccurrences(of: "connect_timeout=5", with: "connect_timeout=\(bound)")
        let schema = try #require(environment[grant ? "RESCIND_GRANT_DB_SCHEMA" : "RESCIND_AUDIT_DB_SCHEMA"])
        // A request that needs the database: a token lookup (an unknown token: 401), or the
        // operator's list of revocations (200).
        let url = URL(string: "http://127.0.0.1:\(port)/v1/\(grant ? "me" : "revocations")")!
        let token =
            grant
            ? "not-a-token-\(UUID().uuidString)"
            : try String(contentsOfFile: try #require(environment["RESCIND_AUDIT_OPERATOR_TOKEN_FILE"]), encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
        let healthyStatus = grant ? 401 : 200
        func probe() async throws -> (answer: TestHTTP.Answer, took: Duration) {
            let sent = ContinuousClock.now
            // A connection per probe: a pooled keep-alive one may have been closed meanwhile (an
            // earlier case's service on the same port, an idle timeout), which is not the subject.
            let answer = try await TestHTTP.send(
                "GET", url, headers: [("Authorization", "Bearer \(token)"), ("Connection", "close")], timeout: .seconds(60))
            return (answer, ContinuousClock.now - sent)
        }

        let service = try await ShutdownDeadlineProcessTests.start(
            program, environment: environment, log: scratch.appendingPathComponent("service.log"))
        started.append(service)
        #expect(try await probe().answer.status == healthyStatus)
        let metricsURL = URL(string: "http://127.0.0.1:\(port)/metrics")!
        /// Waits until `/metrics` shows `line` (it never needs the database).
        func metricsShow(_ line: String, within: Duration) async throws -> Bool {
            let deadline = ContinuousClock.now + within
            while ContinuousClock.now < deadline {
                let text = try await TestHTTP.send("GET", metricsURL, headers: [("Connection", "close")], timeout: .seconds(10)).text
                if text.split(separator: "\n").contains(Substring(line)) { return true }
                try await Task.sleep(for: .milliseconds(200))
            }
            return false
        }
        #expect(try await metricsShow("rescind_database_up 1.0", within: .seconds(10)))
        #expect(try await metricsShow("rescind_broker_up 1.0", within: .seconds(10)))

        // Frozen: every request answers 503 database_unavailable within the bound (a statement's
        // wait, or the wait for a pooled connection, plus at most a connect timeout), again and again.
        #expect(!postgres.freeze().isEmpty)
        for attempt in 1...3 {
            let (answer, took) = try await probe()
            print("frozen-database \(program): attempt \(attempt) answered \(answer.status) after \(took)")
            #expect(answer.status == 503, "attempt \(attempt): \(answer.status) \(answer.text)")
            #expect(answer.text.contains("\"database_unavailable\""), "attempt \(attempt): \(answer.text)")
            #expect(took < .seconds(2 * bound + 2), "attempt \(attempt) answered after \(took), bound \(bound) s")
        }
        // The relay's pass (polling every 100 ms) gave up on its own and said so.
        let relay = grant ? "outbox publish failed; will retry" : "notification publish failed; will retry"
        let deadline = ContinuousClock.now + .seconds(3 * bound + 5)
        while !(service.text.contains(relay) && service.text.contains("timedOut")), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(service.text.contains(relay), "\(service.logTail(lines: 20))")
        #expect(service.text.contains("timedOut"), "\(service.logTail(lines: 20))")
        #expect(service.isRunning)
        // The probe's own call waits the bound and its check of the server (at least 2 s).
        #expect(try await metricsShow("rescind_database_up 0.0", within: .seconds(2 * bound + 8)), "\(service.logTail(lines: 20))")
        #expect(service.text.contains("database not answering"))

        // Thawed: the service answers again by itself, and the relay publishes and marks a row
        // written now (it was not left stuck on a dead connection).
        postgres.thaw()
        let healed = ContinuousClock.now + .seconds(30)
        var status = 0
        while status != healthyStatus, ContinuousClock.now < healed {
            status = (try? await probe().answer.status) ?? 0
            if status != healthyStatus { try await Task.sleep(for: .milliseconds(200)) }
        }
        #expect(status == healthyStatus, "not healed 30 s after the thaw: \(service.logTail(lines: 20))")
        print("frozen-database \(program): answering \(status) again \(ContinuousClock.now - (healed - .seconds(30))) after the thaw")
        #expect(try await metricsShow("rescind_database_up 1.0", within: .seconds(10)))

        var configuration = try PostgresConfiguration(url: postgres.url)
        configuration.searchPath = [schema]
        let connection = try await PostgresConnection.connect(configuration: configuration, logger: .forTests("frozen-test"))
        let table = grant ? "outbox" : "notification_outbox"
        if grant {
            try await connection.execute(
                "INSERT INTO outbox (topic, message_key, payload) VALUES ('frozen.probe', 'k', '\\x01'::bytea)")
        } else {
            try await connection.execute(
                "INSERT INTO notification_outbox (notification_id, kind, envelope) VALUES (gen_random_uuid(), 'probe', '\\x01'::bytea)")
        }
        let published = ContinuousClock.now + .seconds(30)
        var unsent = -1
        while unsent != 0, ContinuousClock.now < published {
            unsent = try await connection.query("SELECT count(*) FROM \(unescaped: table) WHERE sent_at IS NULL")
                .first!.decode(Int.self, column: 0)
            if unsent != 0 { try await Task.sleep(for: .milliseconds(200)) }
        }
        await connection.close()
        #expect(unsent == 0, "the relay did not publish after the thaw: \(service.logTail(lines: 20))")
        #expect(service.isRunning)
    }
}
