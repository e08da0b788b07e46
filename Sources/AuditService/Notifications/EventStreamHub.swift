import Foundation
import Logging
import RescindObservability
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

    /// Which events a subscriber receives.
    struct Filter: Sendable {
        /// One family member, or (nil) all that `ownerUserID` allows.
        var familyMemberID: UUID?
        /// Only the family members this user owns now (an owner's stream); nil for the
        /// operator. Events without a family member reach the operator only.
        var ownerUserID: UUID?

        func admits(_ event: StoredStreamEvent) -> Bool {
            if let familyMemberID, event.familyMemberID != familyMemberID { return false }
            if let ownerUserID, event.ownerUserID != ownerUserID { return false }
            return true
        }
    }

    private struct Subscriber {
        var filter: Filter
        var continuation: AsyncStream<Item>.Continuation
    }

    private struct State {
        var subscribers: [Int: Subscriber] = [:]
        var nextID = 0
        var delivered: Int64 = 0
        var stopped = false
    }

    private let pool: PostgresConnectionPool
    private let database: PostgresConfiguration
    private let pollInterval: Duration
    private let heartbeatInterval: Duration
    /// Items buffered per subscriber before it is ended as too slow.
    private let bufferLimit: Int
    private let metrics: AuditMetrics?
    private let logger: Logger
    private let state = Mutex(State())

    init(
        pool: PostgresConnectionPool, database: PostgresConfiguration, pollInterval: Duration,
        heartbeatInterval: Duration = .seconds(15), bufferLimit: Int = 1000, metrics: AuditMetrics? = nil, logger: Logger
    ) {
        self.pool = pool
        self.database = database
        self.pollInterval = pollInterval
        self.heartbeatInterval = heartbeatInterval
        self.bufferLimit = bufferLimit
        self.metrics = metrics
        self.logger = logger
    }

    /// Live events from now on that `filter` admits.
    func subscribe(_ filter: Filter) -> AsyncStream<Item> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: Item.self, bufferingPolicy: .bufferingOldest(bufferLimit))
        let id = state.withLock { state -> Int? in
            guard !state.stopped else { return nil }
            state.nextID += 1
            state.subscribers[state.nextID] = Subscriber(filter: filter, continuation: continuation)
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
    func replay(after: Int64, filter: Filter, limit: Int = 1000) async throws -> [StoredStreamEvent] {
        try await pool.withConnection { try await Self.events(after: after, filter: filter, limit: limit, on: $0) }
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
                    try await Self.events(after: after, filter: Filter(), limit: 500, on: $0)
                }
                for event in events { broadcast(.event(event)) }
                if let last = events.last { state.withLock { $0.delivered = max($0.delivered, last.id) } }
                if events.count < 500 { return }
            }
        } catch where !Task.isCancelled {
            logger.warning("event stream read failed; will retry", metadata: [LogKey.error: "\(error)"])
        } catch {}
    }

    private func broadcast(_ item: Item) {
        let targets = state.withLock { state in
            state.subscribers.filter { _, subscriber in
                guard case .event(let event) = item else { return true }
                return subscriber.filter.admits(event)
            }
        }
        for (_, subscriber) in targets {
            if case .dropped = subscriber.continuation.yield(item) {
                // Too slow: end it rather than silently skip events or buffer without bound.
                subscriber.continuation.finish()
                metrics?.slowStreamEnded.increment()
            }
        }
    }

    /// Stored events after `after` that `filter` admits, in order, each with the family
    /// member's current owner.
    static func events(
        after: Int64, filter: Filter, limit: Int, on connection: PostgresConnection
    ) async throws -> [StoredStreamEvent] {
        try await connection.query(
            """
            SELECT s.stream_id, s.type, s.family_member_id, f.owner_user_id, s.data
            FROM stream_events s LEFT JOIN family_members f ON f.family_member_id = s.family_member_id
            WHERE s.stream_id > \(after)
              AND (\(filter.familyMemberID)::uuid IS NULL OR s.family_member_id = \(filter.familyMemberID))
              AND (\(filter.ownerUserID)::uuid IS NULL OR f.owner_user_id = \(filter.ownerUserID))
            ORDER BY s.stream_id LIMIT \(limit)
            """
        ).map { row in
            let (id, type, familyMemberID, owner, data) = try row.decode(
                Int64.self, String.self, UUID?.self, UUID?.self, PostgresJSON.self)
            return StoredStreamEvent(id: id, kind: type, familyMemberID: familyMemberID, ownerUserID: owner, data: data.bytes)
        }
    }

    /// The id of the newest stored event (a snapshot's position in the stream).
    static func position(on connection: PostgresConnection) async throws -> Int64 {
        try await connection.query("SELECT coalesce(max(stream_id), 0) FROM stream_events").first!.decode(Int64.self, column: 0)
    }
}
