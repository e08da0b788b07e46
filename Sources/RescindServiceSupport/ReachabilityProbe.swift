import Logging
import RescindPostgres

/// Whether a service's database and brokers answer, asked every `interval` off the request
/// path and shown as `rescind_database_up` and `rescind_broker_up` (`ServiceMetrics`), so that
/// an alert sees an outage whether or not anything is asking `/ready`.
///
/// Each gauge changes only when the answer does, with one log line (a warning when a server
/// stops answering, a notice when it answers again). A database that stops answering takes
/// `RESCIND_DATABASE_TIMEOUT_SECONDS` and its probe to be noticed; the two probes run as
/// separate services so that a silent database never delays the broker's probe.
public enum ReachabilityProbe {
    /// The database's probe: one `SELECT 1` through the service's pool (its call deadline applies).
    public static func database(
        pool: PostgresConnectionPool, metrics: ServiceMetrics, interval: Duration, logger: Logger
    ) -> PeriodicService {
        PeriodicService(name: "database probe", interval: interval, logger: logger) {
            record(await databaseAnswers(pool), on: metrics.databaseUp, server: "database", logger: logger)
        }
    }

    /// The brokers' probe: `answers` returns whether they answered (`KafkaProducer.brokersAnswer`).
    public static func broker(
        metrics: ServiceMetrics, interval: Duration, logger: Logger, answers: @escaping @Sendable () async -> Bool
    ) -> PeriodicService {
        PeriodicService(name: "broker probe", interval: interval, logger: logger) {
            record(await answers(), on: metrics.brokerUp, server: "Kafka brokers", logger: logger)
        }
    }

    /// Whether PostgreSQL answers `SELECT 1` through `pool` (what `/ready` asks too).
    public static func databaseAnswers(_ pool: PostgresConnectionPool) async -> Bool {
        do {
            _ = try await pool.withConnection { try await $0.query("SELECT 1") }
            return true
        } catch {
            return false
        }
    }

    private static func record(_ up: Bool, on gauge: ServiceMetrics.UpGauge, server: String, logger: Logger) {
        guard gauge.set(up) else { return }
        if up { logger.notice("\(server) answering again") } else { logger.warning("\(server) not answering") }
    }
}
