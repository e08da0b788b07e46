import Foundation
import RescindProtocol
import RescindServiceSupport
import RescindTestSupport
import Testing

import GrantService

/// The second, smaller bound on requests without credentials (`RESCIND_GRANT_MAX_ANONYMOUS_IN_FLIGHT`)
/// and the anonymous budgets' burst (`RESCIND_GRANT_BURST_SECONDS`).
@Suite struct AnonymousSheddingTests {
    /// Two slow anonymous senders (registrations: head and half a body) hold the anonymous
    /// bound of 2: the next anonymous request is shed at once with `Retry-After`, while a
    /// device's request (an authenticated route, far under the bound on all) is not, nor is a
    /// device's token renewal (a challenge sent with its live token).
    @Test func anonymousRequestsPastTheirBoundAreShedAndDeviceRequestsAreNot() async throws {
        try await GrantServiceHarness.with({
            $0.http.tls = nil
            $0.limits.maxInFlight = 50
            $0.limits.maxAnonymousInFlight = 2
        }) { service in
            let port = try #require(service.baseURL.port)
            let phone = try await AuthenticationTests.device(service, "Adult A")
            let token = try await phone.session.client.bearerToken()
            let shedBefore = try await FloodTests.metric(service, "rescind_requests_shed_total")
            let slow = LoadSheddingTests.SlowSender()
            defer { slow.close() }
            try slow.open(port: port, count: 2)
            try await service.eventually("two anonymous requests are in flight") {
                try await FloodTests.metric(service, "rescind_requests_in_flight") == 2
            }

            let challenge = try await TestHTTP.send(
                "POST", service.baseURL.appendingPathComponent("v1/auth/challenge"),
                body: try CanonicalJSON.encode(ChallengeRequest(deviceID: UUID())), tls: service.clientTLS)
            #expect(challenge.status == 503, "\(challenge.text)")
            #expect((try? CanonicalJSON.decode(APIErrorBody.self, from: challenge.body))?.error.code == "overloaded")
            #expect(challenge.headers.first { $0.0.lowercased() == "retry-after" }?.1 == "1")
            #expect(try await FloodTests.metric(service, "rescind_requests_shed_total") - shedBefore == 1)
            // A device's request is not counted by the anonymous bound: answered (401 without a token), not shed.
            let device = try await TestHTTP.send("GET", service.baseURL.appendingPathComponent("v1/me"), tls: service.clientTLS)
            #expect(device.status == 401, "\(device.text)")
            let renewal = try await TestHTTP.send(
                "POST", service.baseURL.appendingPathComponent("v1/auth/challenge"),
                headers: [("Content-Type", "application/json"), ("Authorization", "Bearer \(token)")],
                body: try CanonicalJSON.encode(ChallengeRequest(deviceID: phone.id)), tls: service.clientTLS)
            #expect(renewal.status == 200, "\(renewal.text)")

            slow.close()
            try await service.eventually("the slow requests ended") {
                try await FloodTests.metric(service, "rescind_requests_in_flight") == 0
            }
            let served = try await TestHTTP.send(
                "POST", service.baseURL.appendingPathComponent("v1/auth/challenge"),
                body: try CanonicalJSON.encode(ChallengeRequest(deviceID: UUID())), tls: service.clientTLS)
            #expect(served.status != 503, "\(served.text)")
        }
    }

    @Test func anAnonymousBudgetsBurstIsSecondsOfItsRate() throws {
        #expect(RateLimiter.Rate.perMinute(1200, burstSeconds: 10) == RateLimiter.Rate(burst: 200, perMinute: 1200))
        #expect(RateLimiter.Rate.perMinute(3, burstSeconds: 10) == RateLimiter.Rate(burst: 1, perMinute: 3))
        #expect(RateLimiter.Rate.perMinute(0, burstSeconds: 10) == RateLimiter.Rate(burst: 0, perMinute: 0))
        let configuration = try GrantServiceConfiguration(environment: [
            "RESCIND_GRANT_BURST_SECONDS": "30", "RESCIND_GRANT_CHALLENGES_PER_ADDRESS_PER_MINUTE": "600",
            "RESCIND_GRANT_TOKENS_PER_MINUTE": "100", "RESCIND_GRANT_MAX_ANONYMOUS_IN_FLIGHT": "7",
        ])
        #expect(configuration.limits.challengesPerAddress == RateLimiter.Rate(burst: 300, perMinute: 600))
        #expect(configuration.limits.tokensPerAddress == RateLimiter.Rate(burst: 600, perMinute: 1200))
        #expect(configuration.limits.tokens == RateLimiter.Rate(burst: 50, perMinute: 100))
        #expect(configuration.limits.registrations == RateLimiter.Rate(burst: 1500, perMinute: 3000))
        // Not an anonymous budget: a minute's at once.
        #expect(configuration.limits.requestsPerDevice == .perMinute(12_000))
        #expect(configuration.limits.maxAnonymousInFlight == 7)
        #expect(configuration.anonymousInFlightBound == 7)
        var pooled = GrantServiceConfiguration()
        #expect(pooled.anonymousInFlightBound == 4)
        pooled.database.poolSize = 32
        #expect(pooled.anonymousInFlightBound == 16)
        let defaults = try GrantServiceConfiguration(environment: [:]).limits
        #expect(defaults.challengesPerAddress == RateLimiter.Rate(burst: 200, perMinute: 1200))
        #expect(defaults.challenges == RateLimiter.Rate(burst: 200, perMinute: 1200))
        #expect(defaults.registrations == RateLimiter.Rate(burst: 500, perMinute: 3000))
        #expect(throws: (any Error).self) {
            try GrantServiceConfiguration(environment: ["RESCIND_GRANT_BURST_SECONDS": "0"])
        }
    }
}
