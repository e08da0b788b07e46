import Hummingbird
import Logging
import ServiceLifecycle
import Synchronization

/// A stand-in OpenTelemetry collector for the tracing section: `POST /v1/traces` (OTLP/HTTP) on
/// loopback, answered at once and counted, nothing kept. The exporters' whole path runs — the
/// JSON encoding, the batching, the HTTP request — without a real collector's own cost.
final class BenchCollector: Sendable {
    struct Received: Sendable {
        var requests = 0
        var bytes = 0
        /// Spans received (each OTLP span has one `"spanId"` key; a span link has one too).
        var spans = 0
    }

    /// What was received, shared with the route.
    final class Tally: Sendable {
        let value = Mutex(Received())
    }

    let port: Int
    private let tally: Tally
    private let group: ServiceGroup
    private let server: Task<Void, any Error>

    private init(port: Int, tally: Tally, group: ServiceGroup, server: Task<Void, any Error>) {
        self.port = port
        self.tally = tally
        self.group = group
        self.server = server
    }

    var endpoint: String { "http://127.0.0.1:\(port)" }
    var counts: Received { tally.value.withLock { $0 } }

    static func start() async throws -> BenchCollector {
        let tally = Tally()
        let router = Router(context: BasicRequestContext.self)
        router.post("v1/traces") { request, _ -> HTTPResponse.Status in
            let body = try await request.body.collect(upTo: 16 << 20)
            let spans = Self.occurrences(of: Array(#""spanId""#.utf8), in: Array(body.readableBytesView))
            tally.value.withLock {
                ($0.requests, $0.bytes, $0.spans) = ($0.requests + 1, $0.bytes + body.readableBytes, $0.spans + spans)
            }
            return .ok
        }
        let (ports, portSent) = AsyncStream.makeStream(of: Int.self)
        var logger = Logger(label: "rescind.bench.collector")
        logger.logLevel = .warning
        let application = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: "bench-collector"),
            onServerRunning: { channel in
                portSent.yield(channel.localAddress?.port ?? 0)
                portSent.finish()
            }, logger: logger)
        // In a group of its own, so that `stop()` shuts it down gracefully (a cancelled server logs errors).
        let group = ServiceGroup(configuration: .init(services: [application], logger: logger))
        let server = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next(), port > 0 else {
            server.cancel()
            throw BenchError("the bench's OTLP collector did not start")
        }
        return BenchCollector(port: port, tally: tally, group: group, server: server)
    }

    static func occurrences(of pattern: [UInt8], in bytes: [UInt8]) -> Int {
        guard !pattern.isEmpty, bytes.count >= pattern.count else { return 0 }
        var count = 0
        var index = 0
        while index <= bytes.count - pattern.count {
            if bytes[index] == pattern[0], bytes[index..<(index + pattern.count)].elementsEqual(pattern) {
                count += 1
                index += pattern.count
            } else {
                index += 1
            }
        }
        return count
    }

    func stop() async {
        await group.triggerGracefulShutdown()
        _ = await server.result
    }
}
