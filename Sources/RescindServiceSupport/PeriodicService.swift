import Logging
import RescindObservability
import ServiceLifecycle

/// Runs one piece of work now and then every `interval` until graceful shutdown or
/// cancellation: the loop of every periodic job of the services (the grant service's
/// janitor, the audit service's deadline monitor).
///
/// A failed pass is logged as a warning ("`name` failed") and the next pass comes after the
/// interval as usual. A graceful shutdown ends the wait at once; a pass in progress finishes first.
public struct PeriodicService: Service {
    /// Names the work in the warning logged when a pass fails ("janitor sweep").
    public let name: String
    public let interval: Duration
    private let logger: Logger
    private let work: @Sendable () async throws -> Void

    public init(name: String, interval: Duration, logger: Logger, work: @escaping @Sendable () async throws -> Void) {
        self.name = name
        self.interval = interval
        self.logger = logger
        self.work = work
    }

    public func run() async throws {
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                try await work()
            } catch where !Task.isCancelled {
                logger.warning("\(name) failed", metadata: [LogKey.error: "\(error)"])
            }
            // Ends the loop promptly on graceful shutdown or cancellation.
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
            } catch {
                return
            }
        }
    }
}
