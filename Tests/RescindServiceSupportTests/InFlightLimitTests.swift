import Hummingbird
import HummingbirdTesting
import RescindServiceSupport
import Synchronization
import Testing

/// The load-shedding middleware both services run, on a router of its own: a route that stays
/// in flight until the test lets it go holds the only place, and the next request is shed.
@Suite struct InFlightLimitTests {
    final class Gate: Sendable {
        let inFlight = Mutex(0)
        let shed = Mutex(0)
        let (released, release) = AsyncStream.makeStream(of: Void.self)
    }

    @Test func pastTheBoundARequestIsShedAtOnceAndExemptPathsAreNot() async throws {
        let gate = Gate()
        let router = Router()
        router.add(middleware: ErrorMiddleware())
        router.add(
            middleware: InFlightLimitMiddleware(
                limit: 1, exempt: ["/health"], changed: { count in gate.inFlight.withLock { $0 = count } },
                shed: { gate.shed.withLock { $0 += 1 } }))
        router.get("slow") { _, _ -> String in
            for await _ in gate.released { break }
            return "done"
        }
        router.get("fast") { _, _ in "fast" }
        router.get("health") { _, _ in "ok" }
        try await Application(router: router).test(.router) { client in
            async let slow = client.execute(uri: "/slow", method: .get)
            while gate.inFlight.withLock({ $0 }) < 1 { try await Task.sleep(for: .milliseconds(10)) }

            let shed = try await client.execute(uri: "/fast", method: .get)
            #expect(shed.status == .serviceUnavailable)
            #expect(shed.headers[.retryAfter] == "1")
            #expect(String(buffer: shed.body).contains(#""code":"overloaded""#))
            #expect(gate.shed.withLock { $0 } == 1)
            #expect(try await client.execute(uri: "/health", method: .get).status == .ok)

            gate.release.yield()
            #expect(try await slow.status == .ok)
            #expect(gate.inFlight.withLock { $0 } == 0)
            #expect(try await client.execute(uri: "/fast", method: .get).status == .ok)
        }
    }
}
