import Foundation
import Logging
import RescindObservability

/// LISTENs on channels over a dedicated connection and delivers what arrives as an
/// `AsyncSequence` (single consumer).
///
/// A thread of its own waits in `poll()` on the connection's socket, so an idle listener costs
/// no CPU and wakes as soon as a NOTIFY arrives. When the connection breaks it reconnects
/// (every `reconnectDelay`) and LISTENs again, then yields `.listening` once more: NOTIFYs sent
/// while it was disconnected are lost, so a consumer should re-check its source of truth on
/// every `.listening` (an outbox relay re-scans its table).
///
/// The listener stops when `stop()` is called, when the consuming task is cancelled, or when
/// the listener is deallocated; the sequence then ends.
public final class PostgresNotificationListener: AsyncSequence, Sendable {
    public enum Event: Sendable, Hashable {
        /// LISTEN is in effect: first delivered right after `start`, again after each reconnect.
        case listening
        case notification(PostgresNotification)
    }

    private let events: AsyncStream<Event>
    private let state: ListenerState

    private init(events: AsyncStream<Event>, state: ListenerState) {
        self.events = events
        self.state = state
    }

    deinit {
        state.stop()
    }

    /// Connects, LISTENs on every channel, and returns once notifications are being received,
    /// so a NOTIFY sent after `start` returns is never missed.
    /// - Parameter channels: channel names, exact and case-sensitive (as given to `pg_notify`).
    /// - Throws: `.connectionFailed` or `.server` when the first connection or LISTEN fails;
    ///   later failures are logged and retried.
    public static func start(
        configuration: PostgresConfiguration,
        channels: [String],
        reconnectDelay: Duration = .seconds(1),
        logger: Logger
    ) async throws -> PostgresNotificationListener {
        let state = ListenerState()
        let (events, continuation) = AsyncStream.makeStream(of: Event.self)
        continuation.onTermination = { _ in state.stop() }
        let parameters = configuration.connectionParameters
        let callTimeout = configuration.callTimeout
        try await withCheckedThrowingContinuation { (started: CheckedContinuation<Void, any Error>) in
            let thread = Thread {
                listen(
                    parameters: parameters, callTimeout: callTimeout, channels: channels, reconnectDelay: reconnectDelay, logger: logger,
                    state: state, events: continuation, started: started)
            }
            thread.name = "rescind.postgres.listener"
            thread.start()
        }
        return PostgresNotificationListener(events: events, state: state)
    }

    /// Stops listening and ends the sequence (within a quarter second).
    public func stop() {
        state.stop()
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(base: events.makeAsyncIterator(), listener: self)
    }

    public struct Iterator: AsyncIteratorProtocol {
        var base: AsyncStream<Event>.Iterator
        /// Keeps the listener (and so its thread) alive while iterating.
        let listener: PostgresNotificationListener

        public mutating func next() async -> Event? {
            await base.next()
        }
    }

    /// The listener thread's body: connect, LISTEN, then wait on the socket until stopped.
    private static func listen(
        parameters: [(keyword: String, value: String)],
        callTimeout: Duration?,
        channels: [String],
        reconnectDelay: Duration,
        logger: Logger,
        state: ListenerState,
        events: AsyncStream<Event>.Continuation,
        started: CheckedContinuation<Void, any Error>
    ) {
        var started: CheckedContinuation<Void, any Error>? = started
        defer { events.finish() }
        while !state.isStopped {
            let connection: LibPQConnection
            do {
                // LISTEN bounded like any call (a frozen server: retried after `reconnectDelay`).
                connection = try LibPQConnection.connect(parameters, callTimeout: callTimeout, logger: logger)
                for channel in channels {
                    _ = try connection.execute(script: "LISTEN \(quoteIdentifier(channel))")
                }
            } catch {
                if let first = started {
                    first.resume(throwing: error)
                    return
                }
                logger.warning("postgres listener cannot reconnect yet", metadata: [LogKey.error: "\(error)"])
                state.sleep(for: reconnectDelay)
                continue
            }
            events.yield(.listening)
            started?.resume()
            started = nil
            do {
                while !state.isStopped {
                    guard try connection.waitForInput(timeoutMilliseconds: 250) else { continue }
                    for notification in try connection.takeNotifications() {
                        events.yield(.notification(notification))
                    }
                }
            } catch {
                logger.warning("postgres listener lost its connection; reconnecting", metadata: [LogKey.error: "\(error)"])
            }
            connection.close()
        }
        // Stopped before the first LISTEN completed.
        started?.resume(throwing: CancellationError())
    }
}
