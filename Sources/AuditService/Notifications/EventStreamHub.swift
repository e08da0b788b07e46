import Foundation
import Logging
import RescindPostgres
import ServiceLifecycle
import Synchronization

/// Fans the stream events of every replica out to this replica's SSE subscribers.
///
/// The source of truth is `stream_events`: the hub wakes on its NOTIFY (or polls),
/// reads the rows after the last id it delivered, in id order, and hands each to the
/// subscribers whose filter matches. A subscriber that cannot keep up is ended (its
/// client reconnects with `Last-Event-ID` and replays from the table).
final class EventStreamHub: Service, Sendable {
    enum Item: Sendable {
        case event(StoredStreamEvent)
        /// Sent periodically so that idle connections stay open and dead ones are noticed.
        case heartbeat
    }

    private struct Subscriber {
        var familyMemberID: UUID?
        var continuation: AsyncStream<Item>.Continuation
    }

    private struct State {
        var subscribers: [Int: Subscriber] = [:]
        var nextID = 0
        var delivered: Int64 = 0
        var stopped = false
    }

    static let bufferLimit = 10_000

    private let pool: PostgresConnectionPool
    private let database: PostgresConfiguration
    private let pollInterval: Duration
    private let heartbeatInterval: Duration
    private let logger: Logger
    private let state = Mutex(State())

    init(
        pool: PostgresConnectionPool, database: PostgresConfiguration, pollInterval: Duration,
        heartbeatInterval: Duration = .seconds(15), logger: Logger
    ) {
        self.pool = pool
        self.database = database
        self.pollInterval = pollInterval
        self.heartbeatInterval = heartbeatInterval
        self.logger = logger
    }

    /// Live events from now on, for one family member or (nil) for all. Events without a
    /// family member reach unfiltered subscribers only.
    func subscribe(familyMemberID: UUID?) -> AsyncStream<Item> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: Item.self, bufferingPolicy: .bufferingOldest(Self.bufferLimit))
        let id = state.withLock { state -> Int? in
            guard !state.stopped else { return nil }
            state.nextID += 1
            state.subscribers[state.nextID] = Subscriber(familyMemberID: familyMemberID, continuation: continuation)
            return state.nextID
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Stored events after `after`, for a reconnecting client (at most `limit`).
    func replay(after: Int64, familyMemberID: UUID?, limit: Int = 1000) async throws -> [StoredStreamEvent] {
        try await pool.withConnection { try await Self.events(after: after, familyMemberID: familyMemberID, limit: limit, on: $0) }
    }

    func run() async throws {
        let start = try await pool.withConnection { connection in
            try await connection.query("SELECT coalesce(max(stream_id), 0) FROM stream_events").first!.decode(Int64.self, column: 0)
        }
        state.withLock { $0.delivered = max($0.delivered, start) }
        let listener = try await PostgresNotificationListener.start(
            configuration: database, channels: [ConclusionWriter.streamChannel], logger: logger)
        let (wakeups, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        await withGracefulShutdownHandler {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await _ in listener { wake.yield() }
                }
                group.addTask {
                    while (try? await Task.sleep(for: self.pollInterval)) != nil { wake.yield() }
                }
                group.addTask {
                    while (try? await Task.sleep(for: self.heartbeatInterval)) != nil { self.broadcast(.heartbeat) }
                }
                for await _ in wakeups {
                    await deliverNew()
                }
                listener.stop()
                group.cancelAll()
            }
        } onGracefulShutdown: {
            wake.finish()
        }
        let subscribers = state.withLock { state in
            state.stopped = true
            defer { state.subscribers.removeAll() }
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.continuation.finish() }
    }

    private func deliverNew() async {
        do {
            while true {
                let after = state.withLock { $0.delivered }
                let events = try await pool.withConnection {
                    try await Self.events(after: after, familyMemberID: nil, limit: 500, on: $0)
                }
                for event in events { broadcast(.event(event)) }
                if let last = events.last { state.withLock { $0.delivered = max($0.delivered, last.id) } }
                if events.count < 500 { return }
            }
        } catch where !Task.isCancelled {
            logger.warning("event stream read failed; will retry", metadata: ["error": "\(error)"])
        } catch {}
    }

    private func broadcast(_ item: Item) {
        let targets = state.withLock { state in
            state.subscribers.filter { _, subscriber in
                guard case .event(let event) = item, let wanted = subscriber.familyMemberID else { return true }
                return event.familyMemberID == wanted
            }
        }
        for (_, subscriber) in targets {
            if case .dropped = subscriber.continuation.yield(item) {
                // Too slow: end it rather than silently skip events.
                subscriber.continuation.finish()
            }
        }
    }

    static func events(
        after: Int64, familyMemberID: UUID?, limit: Int, on connection: PostgresConnection
    ) async throws -> [StoredStreamEvent] {
        try await connection.query(
            """
            SELECT stream_id, type, family_member_id, data FROM stream_events
            WHERE stream_id > \(after) AND (\(familyMemberID)::uuid IS NULL OR family_member_id = \(familyMemberID))
            ORDER BY stream_id LIMIT \(limit)
            """
        ).map { row in
            let (id, type, familyMemberID, data) = try row.decode(Int64.self, String.self, UUID?.self, PostgresJSON.self)
            return StoredStreamEvent(id: id, kind: type, familyMemberID: familyMemberID, data: data.bytes)
        }
    }

    /// The id of the newest stored event (a snapshot's position in the stream).
    static func position(on connection: PostgresConnection) async throws -> Int64 {
        try await connection.query("SELECT coalesce(max(stream_id), 0) FROM stream_events").first!.decode(Int64.self, column: 0)
    }
}
