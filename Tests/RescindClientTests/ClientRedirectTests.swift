import Foundation
import Hummingbird
import HummingbirdTesting
import RescindClient
import RescindTLS
import Synchronization
import Testing

/// A grant service that is not what it claims (compromised, or an address an observer answers
/// for) redirects the client elsewhere: the client must not follow, or the device's bearer token
/// and the request would go wherever the answer points.
@Suite struct ClientRedirectTests {
    @Test func aRedirectIsNeverFollowed() async throws {
        let reached = Mutex(0)
        let elsewhere = Router()
        elsewhere.get("**") { _, _ in
            reached.withLock { $0 += 1 }
            return "ready"
        }
        try await Application(router: elsewhere).test(.live) { target in
            let port = try #require(target.port)
            let redirecting = Router()
            redirecting.get("**") { _, _ in
                Response(status: .found, headers: [.location: "http://127.0.0.1:\(port)/ready"])
            }
            try await Application(router: redirecting).test(.live) { redirector in
                let client = GrantServiceClient(
                    baseURL: URL(string: "http://127.0.0.1:\(try #require(redirector.port))")!,
                    tls: ClientTLS(plainHTTP: .loopback))
                // The 302 is the answer: not ready, and the other server never hears of it.
                #expect(try await client.isReady() == false)
                #expect(reached.withLock { $0 } == 0)
                // The same server, asked directly, answers (the test could see a followed redirect).
                #expect(try await GrantServiceClient(
                    baseURL: URL(string: "http://127.0.0.1:\(port)")!, tls: ClientTLS(plainHTTP: .loopback)
                ).isReady())
                #expect(reached.withLock { $0 } == 1)
            }
        }
    }
}
