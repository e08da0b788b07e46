import Foundation
import Glibc
import RescindProtocol
import RescindTestSupport
import Testing

/// Load shedding: past `RESCIND_GRANT_MAX_IN_FLIGHT` requests in flight, one more is answered
/// 503 `overloaded` with `Retry-After` at once, and the service serves again as soon as the
/// requests in flight end.
@Suite struct LoadSheddingTests {
    /// A client that opens connections and sends a request's head and the start of its body,
    /// then nothing (a slow sender: each holds a request in flight for as long as it likes).
    final class SlowSender {
        private(set) var sockets: [Int32] = []

        func open(port: Int, count: Int) throws {
            for _ in 0..<count {
                let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
                guard socket >= 0 else { throw POSIXError(.EIO) }
                sockets.append(socket)
                var address = sockaddr_in()
                address.sin_family = sa_family_t(AF_INET)
                address.sin_port = in_port_t(UInt16(port).bigEndian)
                address.sin_addr.s_addr = inet_addr("127.0.0.1")
                let connected = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
                guard connected == 0 else { throw POSIXError(.ECONNREFUSED) }
                let head = "POST /v1/users HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 4096\r\n\r\n{\"user_id\""
                let sent = head.utf8CString.withUnsafeBufferPointer { Glibc.send(socket, $0.baseAddress, $0.count - 1, 0) }
                guard sent == head.utf8.count else { throw POSIXError(.EIO) }
            }
        }

        func close() {
            for socket in sockets { Glibc.close(socket) }
            sockets = []
        }

        deinit { close() }
    }

    @Test func requestsPastTheBoundAreShedAtOnceAndServedAgainWhenTheyEnd() async throws {
        // Plain HTTP, so that the slow sender needs no TLS; everything else as in production.
        try await GrantServiceHarness.with({
            $0.http.tls = nil
            $0.limits.maxInFlight = 3
        }) { service in
            let port = try #require(service.baseURL.port)
            let shedBefore = try await FloodTests.metric(service, "rescind_requests_shed_total")
            let slow = SlowSender()
            defer { slow.close() }
            try slow.open(port: port, count: 3)
            try await service.eventually("three requests are in flight") {
                try await FloodTests.metric(service, "rescind_requests_in_flight") == 3
            }

            let started = ContinuousClock.now
            let shed = try await TestHTTP.send("GET", service.baseURL.appendingPathComponent("v1/me"), tls: service.clientTLS)
            let took = ContinuousClock.now - started
            #expect(shed.status == 503, "\(shed.text)")
            #expect((try? CanonicalJSON.decode(APIErrorBody.self, from: shed.body))?.error.code == "overloaded")
            #expect(shed.headers.first { $0.0.lowercased() == "retry-after" }?.1 == "1")
            // At once: nothing is waited for (the bound is generous for a loaded 2-core machine).
            #expect(took < .seconds(2), "shed after \(took)")
            #expect(try await FloodTests.metric(service, "rescind_requests_shed_total") - shedBefore == 1)
            // The operations endpoints are not counted: health and metrics answer under overload.
            #expect(try await TestHTTP.send("GET", service.baseURL.appendingPathComponent("health"), tls: service.clientTLS).status == 200)

            slow.close()
            try await service.eventually("the slow requests ended") {
                try await FloodTests.metric(service, "rescind_requests_in_flight") == 0
            }
            let served = try await TestHTTP.send("GET", service.baseURL.appendingPathComponent("v1/me"), tls: service.clientTLS)
            #expect(served.status == 401, "\(served.text)")
        }
    }
}
