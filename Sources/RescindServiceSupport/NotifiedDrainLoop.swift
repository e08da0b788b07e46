import Logging
import RescindObservability
import RescindPostgres
import ServiceLifecycle

/// Drains a PostgreSQL table in batches (an outbox, typically) whenever one of its NOTIFY
/// channels fires and every `pollInterval`, until graceful shutdown.
///
/// Both services publish what they commit through an outbox: the rows are written in the
/// business transaction and a relay sends them afterwards. The NOTIFY makes that prompt; the
/// poll is the safety net for notifications lost while the listener reconnected, or sent
/// while no replica was listening. Wake-ups that arrive during a drain coalesce into one
/// more drain, so a burst of commits costs one pass, not one pass each. A failed batch is
/// logged and followed by a pause of `retryDelay` (a broker outage must not spin the loop);
/// the next wake-up, the poll at the latest, tries again.
///
/// The relays share this one loop so that its shutdown and back-off rules stay the same in
/// both services.
public struct NotifiedDrainLoop: Sendable {
    public let database: PostgresConfiguration
    public let channels: [String]
    public let pollInterval: Duration
    /// A batch that claims this many rows means more may be waiting: the drain goes on.
    public let batchSize: Int
    public let retryDelay: Duration
    /// Names the work in the warning logged when a batch fails ("outbox publish").
    public let name: String
    private let logger: Logger

    public init(
        database: PostgresConfiguration, channels: [String], pollInterval: Duration, batchSize: Int,
        retryDelay: Duration = .milliseconds(500), name: String, logger: Logger
    ) {
        self.database = database
        self.channels = channels
        self.pollInterval = pollInterval
        self.batchSize = batchSize
        self.retryDelay = retryDelay
        self.name = name
        self.logger = logger
    }

    /// Listens on `channels`, drains at once, then on every notification and poll tick.
    ///
    /// Returns after graceful shutdown, once the drain in flight is over: a batch that was
    /// sent is also marked sent.
    /// - Parameters:
    ///   - batch: claims at most `batchSize` rows, handles them and returns how many it
    ///     claimed; throwing leaves what it did not finish to be retried. Neither relay keeps a
    ///     transaction open while it waits for Kafka (they claim, publish, then mark).
    ///   - afterDrain: runs after every drain that cancellation did not cut short (a lag
    ///     gauge, for instance).
    /// - Throws: when the listening connection cannot be opened.
    public func run(
        batch: @escaping @Sendable () async throws -> Int,
        afterDrain: @escaping @Sendable () async -> Void = {}
    ) async throws {
        let listener = try await PostgresNotificationListener.start(configuration: database, channels: channels, logger: logger)
        let (wakeups, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let pollInterval = self.pollInterval
        await withGracefulShutdownHandler {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await _ in listener { wake.yield() }
                }
                group.addTask {
                    while (try? await Task.sleep(for: pollInterval)) != nil { wake.yield() }
                }
                wake.yield()
                for await _ in wakeups {
                    if await drain(batch: batch) { await afterDrain() }
                }
                listener.stop()
                group.cancelAll()
            }
        } onGracefulShutdown: {
            // Ends the loop after the batch in flight has been handled and marked.
            wake.finish()
        }
    }

    /// Runs `batch` until one comes back short of `batchSize` or fails; a failure is logged
    /// and followed by a pause of `retryDelay`.
    /// - Returns: `false` when cancellation ended it, `true` otherwise (drained, or failed
    ///   and paused).
    @discardableResult
    public func drain(batch: @Sendable () async throws -> Int) async -> Bool {
        do {
            while try await batch() == batchSize {}
        } catch where !Task.isCancelled {
            logger.warning("\(name) failed; will retry", metadata: [LogKey.error: "\(error)"])
            try? await Task.sleep(for: retryDelay)
        } catch {
            return false
        }
        return true
    }
}
