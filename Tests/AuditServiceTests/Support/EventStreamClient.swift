import Foundation
import RescindProtocol

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A minimal Server-Sent Events client over URLSession, for tests: parses the stream
/// into events as the bytes arrive.
final class EventStreamClient: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // Safe: `buffer` and `current` are touched only by the session's delegate queue
    // (serial, `maxConcurrentOperationCount` 1); the stream's continuation is thread-safe.
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
    private var buffer = Data()
    private var session: URLSession!
    private var task: URLSessionDataTask?

    init(url: URL, token: String?, lastEventID: Int64? = nil) {
        (events, continuation) = AsyncStream.makeStream(of: Event.self)
        super.init()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        session = URLSession(configuration: .ephemeral, delegate: self, delegateQueue: queue)
        var request = URLRequest(url: url)
        request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let lastEventID { request.setValue(String(lastEventID), forHTTPHeaderField: "Last-Event-ID") }
        request.timeoutInterval = 120
        task = session.dataTask(with: request)
        task?.resume()
    }

    func close() {
        task?.cancel()
        session.invalidateAndCancel()
        continuation.finish()
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

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        buffer.append(data)
        while let end = buffer.range(of: Data("\n\n".utf8)) {
            let block = String(decoding: buffer[buffer.startIndex..<end.lowerBound], as: UTF8.self)
            buffer.removeSubrange(buffer.startIndex..<end.upperBound)
            var event = Event(id: nil, type: "message", data: "")
            var hasData = false
            for line in block.split(separator: "\n", omittingEmptySubsequences: false) {
                if line.hasPrefix(":") { continue }
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
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        continuation.finish()
    }
}
