import Foundation
import RescindProtocol
import RescindTestSupport
import Synchronization

/// A minimal Server-Sent Events client over AsyncHTTPClient (HTTPS with the suite's CA), for
/// tests: parses the stream into events as the bytes arrive.
final class EventStreamClient: Sendable {
    struct Event: Sendable, Equatable {
        var id: Int64?
        var type: String
        var data: String

        func decoded<T: Decodable>(_ type: T.Type) throws -> T {
            try CanonicalJSON.decode(T.self, from: Data(data.utf8))
        }
    }

    let events: AsyncStream<Event>
    private let continuation: AsyncStream<Event>.Continuation
    private let task: Task<Void, Never>
    /// Set once the server's `: connected` comment arrived: it writes it after subscribing, so
    /// from then on nothing committed is missed.
    private let isConnected: Flag

    final class Flag: Sendable {
        private let value = Mutex(false)
        func set() { value.withLock { $0 = true } }
        var isSet: Bool { value.withLock { $0 } }
    }

    init(url: URL, token: String?, lastEventID: Int64? = nil) {
        let (events, continuation) = AsyncStream.makeStream(of: Event.self)
        self.events = events
        self.continuation = continuation
        var headers = [("Accept", "text/event-stream")]
        if let token { headers.append(("Authorization", "Bearer \(token)")) }
        if let lastEventID { headers.append(("Last-Event-ID", String(lastEventID))) }
        let isConnected = Flag()
        self.isConnected = isConnected
        task = Task {
            // Chunks arrive one after another; the lock only lets the closure be Sendable.
            let buffer = Mutex(Data())
            _ = try? await TestHTTP.stream(url, headers: headers) { chunk in
                if buffer.withLock({ Self.parse(chunk, buffer: &$0, into: continuation) }) { isConnected.set() }
            }
            continuation.finish()
        }
    }

    func close() {
        task.cancel()
        continuation.finish()
    }

    /// Waits until the server has subscribed this stream (instead of a sleep that a loaded
    /// machine outlasts), or throws after `timeout`.
    func connected(timeout: Duration = .seconds(20)) async throws {
        let deadline = ContinuousClock.now + timeout
        while !isConnected.isSet {
            guard ContinuousClock.now < deadline else { throw HarnessError.timedOut("the event stream's `: connected`") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// The next `count` events of `type` (others are skipped), or a timeout error.
    func next(_ count: Int, type: String? = nil, timeout: Duration = .seconds(20)) async throws -> [Event] {
        let events = self.events
        return try await AuditTestBed.withDeadline(timeout, "\(count) stream event(s)") {
            var received: [Event] = []
            for await event in events where type == nil || event.type == type {
                received.append(event)
                if received.count == count { break }
            }
            return received
        }
    }

    /// Appends bytes to `buffer` and yields every complete event in it.
    /// - Returns: whether a `: connected` comment was among them.
    private static func parse(_ data: Data, buffer: inout Data, into continuation: AsyncStream<Event>.Continuation) -> Bool {
        var connected = false
        buffer.append(data)
        while let end = buffer.range(of: Data("\n\n".utf8)) {
            let block = String(decoding: buffer[buffer.startIndex..<end.lowerBound], as: UTF8.self)
            buffer.removeSubrange(buffer.startIndex..<end.upperBound)
            var event = Event(id: nil, type: "message", data: "")
            var hasData = false
            for line in block.split(separator: "\n", omittingEmptySubsequences: false) {
                if line.hasPrefix(":") {
                    if line == ": connected" { connected = true }
                    continue
                }
                let field = line.prefix { $0 != ":" }
                var value = line.dropFirst(field.count + 1)
                if value.hasPrefix(" ") { value = value.dropFirst() }
                switch field {
                case "id": event.id = Int64(value)
                case "event": event.type = String(value)
                case "data":
                    event.data += (hasData ? "\n" : "") + value
                    hasData = true
                default: break
                }
            }
            if hasData { continuation.yield(event) }
        }
        return connected
    }
}
