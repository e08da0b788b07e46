import Foundation
import RescindClient
import Synchronization
import GrantService
import RescindCrypto
import RescindPostgres
import RescindProtocol
import RescindServiceSupport
import RescindTestSupport
import Testing

/// Floods from anonymous and authenticated clients meet their budgets (429 `rate_limited`
/// with `Retry-After`), grow no table beyond its cap, and leave honest callers served.
///
/// Every service here runs with its own small budgets that earn nothing back during the test
/// (`perMinute` near zero), so the counts are exact whatever the machine's speed; the service
/// trusts 127.0.0.1 as a proxy, so that `X-Forwarded-For` plays many source addresses, and a
/// request without it counts as 127.0.0.1 itself.
@Suite struct FloodTests {
    static let attacker = "203.0.113.66"
    static func budget(_ burst: Int) -> RateLimiter.Rate { RateLimiter.Rate(burst: burst, perMinute: 0.0001) }

    static func send(
        _ service: GrantServiceHarness, _ method: String, _ path: String, from address: String? = nil, token: String? = nil,
        json: some Encodable
    ) async throws -> TestHTTP.Answer {
        var headers = [("Content-Type", "application/json")]
        if let address { headers.append(("X-Forwarded-For", "198.51.100.200, \(address)")) }
        if let token { headers.append(("Authorization", "Bearer \(token)")) }
        return try await TestHTTP.send(
            method, service.baseURL.appendingPathComponent(path), headers: headers, body: try CanonicalJSON.encode(json))
    }

    static func get(_ service: GrantServiceHarness, _ path: String, token: String) async throws -> TestHTTP.Answer {
        try await TestHTTP.send("GET", service.baseURL.appendingPathComponent(path), headers: [("Authorization", "Bearer \(token)")])
    }

    /// A 429 `rate_limited` in the JSON error shape with a usable `Retry-After`.
    static func expectRateLimited(_ answer: TestHTTP.Answer, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(answer.status == 429, "\(answer.text)", sourceLocation: sourceLocation)
        #expect((try? CanonicalJSON.decode(APIErrorBody.self, from: answer.body))?.error.code == "rate_limited", sourceLocation: sourceLocation)
        let retryAfter = answer.headers.first { $0.0.lowercased() == "retry-after" }.flatMap { Int($0.1) }
        #expect((retryAfter ?? 0) >= 1, "Retry-After: \(String(describing: retryAfter))", sourceLocation: sourceLocation)
    }

    /// One series of the service's `/metrics` (labels included, as printed), 0 when absent.
    static func metric(_ service: GrantServiceHarness, _ series: String) async throws -> Double {
        let text = try await TestHTTP.send("GET", service.baseURL.appendingPathComponent("metrics")).text
        for line in text.split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.split(separator: " ")[1]) ?? 0
        }
        return 0
    }

    /// An anonymous client at one address asks challenges for an honest device's id as fast as
    /// it can; then the same from a hundred addresses, one each (a botnet). It has no key: all it
    /// can do is ask. Promised: the one address is refused with 429 past its budget before the
    /// database is asked; however many addresses ask, the device has at most its cap of open
    /// challenges stored; the honest device, from its own address, still gets a challenge and a token.
    @Test func anonymousChallengeFloodsAreRefusedAndStoreNoMoreThanTheCap() async throws {
        try await GrantServiceHarness.with({
            $0.limits.trustedProxies = ["127.0.0.1"]
            $0.limits.challengesPerAddress = Self.budget(10)
            $0.limits.openChallengesPerDevice = 4
        }) { service in
            let phone = try await AuthenticationTests.device(service, "Adult A")
            let refusedBefore = try await Self.metric(service, #"rescind_requests_rate_limited_total{limit="challenges_per_address"}"#)
            var statuses: [Int: Int] = [:]
            for _ in 0..<60 {
                let answer = try await Self.send(
                    service, "POST", "v1/auth/challenge", from: Self.attacker, json: ChallengeRequest(deviceID: phone.id))
                statuses[answer.status, default: 0] += 1
                if answer.status == 429 { Self.expectRateLimited(answer) }
            }
            #expect(statuses == [200: 10, 429: 50])
            let refused = try await Self.metric(service, #"rescind_requests_rate_limited_total{limit="challenges_per_address"}"#)
            #expect(refused - refusedBefore == 50)
            let stored: PostgresQuery = "SELECT count(*) FROM auth_challenges WHERE device_id = \(phone.id)"
            #expect(try await service.count(stored) == 4)

            for host in 1...100 {
                let answer = try await Self.send(
                    service, "POST", "v1/auth/challenge", from: "198.18.0.\(host)", json: ChallengeRequest(deviceID: phone.id))
                #expect(answer.status == 200)
            }
            #expect(try await service.count(stored) == 4)
            #expect(try await service.count("SELECT count(*) FROM auth_challenges") == 4)

            // The honest device, from its own address (127.0.0.1 itself): a challenge and a token.
            let token = try await AuthenticationTests.signIn(service.http, phone)
            #expect(try await Self.get(service, "v1/me", token: token).status == 200)
        }
    }

    /// An anonymous client registers users as fast as it can from one address, then from many.
    /// Promised: past the per-address budget 429, past the service's budget of registrations 429
    /// whatever the address, and the users table holds only what the budgets let through.
    @Test func registrationFloodsAreCappedPerAddressAndInAll() async throws {
        try await GrantServiceHarness.with({
            $0.limits.trustedProxies = ["127.0.0.1"]
            $0.limits.registrationsPerAddress = Self.budget(3)
            $0.limits.registrations = Self.budget(5)
        }) { service in
            func register(from address: String) async throws -> TestHTTP.Answer {
                try await Self.send(service, "POST", "v1/users", from: address, json: try Self.registration())
            }
            var fromOne: [Int: Int] = [:]
            for _ in 0..<20 { fromOne[try await register(from: Self.attacker).status, default: 0] += 1 }
            #expect(fromOne == [201: 3, 429: 17])
            var fromMany: [Int: Int] = [:]
            for host in 1...20 {
                let answer = try await register(from: "198.18.1.\(host)")
                fromMany[answer.status, default: 0] += 1
                if answer.status == 429 { Self.expectRateLimited(answer) }
            }
            #expect(fromMany == [201: 2, 429: 18])
            #expect(try await service.count("SELECT count(*) FROM users") == 5)
            #expect(try await service.count("SELECT count(*) FROM devices") == 5)
        }
    }

    /// A botnet: forty addresses, each far inside its own budget, ask challenges for an honest
    /// device's id and send junk answers. Promised: the service's budgets of every address
    /// together refuse all but their burst (429, counted as `challenges` and `tokens`); the
    /// honest phone, whose token is live, renews it again and again in its own lane; a cold
    /// sign-in meets the spent budget like the flood (the stated price: a device without a live
    /// token waits for `Retry-After`).
    @Test func signInFloodsFromManyAddressesMeetTheServicesBudgetAndRenewalsPass() async throws {
        try await GrantServiceHarness.with({
            $0.limits.trustedProxies = ["127.0.0.1"]
            $0.limits.challenges = Self.budget(6)
            $0.limits.tokens = Self.budget(6)
        }) { service in
            let phone = try await AuthenticationTests.device(service, "Adult A")
            _ = try await phone.session.client.bearerToken()
            let refusedBefore = try await Self.metric(service, #"rescind_requests_rate_limited_total{limit="challenges"}"#)
            var challenges: [Int: Int] = [:]
            var tokens: [Int: Int] = [:]
            for host in 1...40 {
                let address = "198.18.2.\(host)"
                let challenge = try await Self.send(service, "POST", "v1/auth/challenge", from: address, json: ChallengeRequest(deviceID: phone.id))
                challenges[challenge.status, default: 0] += 1
                if challenge.status == 429 { Self.expectRateLimited(challenge) }
                let junk = TokenRequest(challengeID: UUID(), deviceID: phone.id, signature: Data(repeating: 7, count: 64))
                tokens[try await Self.send(service, "POST", "v1/auth/token", from: address, json: junk).status, default: 0] += 1
            }
            #expect(challenges == [200: 5, 429: 35])
            #expect(tokens == [401: 5, 429: 35])
            let refused = try await Self.metric(service, #"rescind_requests_rate_limited_total{limit="challenges"}"#)
            #expect(refused - refusedBefore == 35)

            for _ in 0..<3 { try await phone.session.client.renewToken() }
            #expect(try await Self.get(service, "v1/me", token: try await phone.session.client.bearerToken()).status == 200)
            let cold = phone.session.client.authenticated(as: .init(deviceID: phone.id, signingKey: phone.key))
            await #expect(throws: GrantServiceError.self) { try await cold.renewToken() }
        }
    }

    /// Token minting: a client at one address answers challenges with junk as fast as it can.
    /// Promised: 401 while its budget lasts, then 429 without a challenge being spent; the
    /// honest device's token, from its own address, is unaffected.
    @Test func tokenFloodsAreRefusedPerAddress() async throws {
        try await GrantServiceHarness.with({
            $0.limits.trustedProxies = ["127.0.0.1"]
            $0.limits.tokensPerAddress = Self.budget(5)
        }) { service in
            let phone = try await AuthenticationTests.device(service, "Adult A")
            let junk = TokenRequest(challengeID: UUID(), deviceID: phone.id, signature: Data(repeating: 7, count: 64))
            var statuses: [Int: Int] = [:]
            for _ in 0..<15 {
                statuses[try await Self.send(service, "POST", "v1/auth/token", from: Self.attacker, json: junk).status, default: 0] += 1
            }
            #expect(statuses == [401: 5, 429: 10])
            let token = try await AuthenticationTests.signIn(service.http, phone)
            #expect(try await Self.get(service, "v1/me", token: token).status == 200)
        }
    }

    /// A device with a valid token asks as fast as it can: for data, and for identity
    /// operations (enrolment challenges); then its user's second device, for identity operations.
    /// Promised: the device's own budgets run out (429 with `Retry-After`), the user's budget of
    /// identity operations is shared by its devices (a second device buys no more), and another
    /// user's device of the same address is served as before.
    @Test func aDeviceOrUserBeyondItsShareIsRefusedAndOthersAreNot() async throws {
        try await GrantServiceHarness.with({
            $0.limits.requestsPerDevice = Self.budget(6)
            $0.limits.identityOperationsPerDevice = Self.budget(3)
            $0.limits.identityOperationsPerUser = Self.budget(5)
        }) { service in
            let greedy = try await AuthenticationTests.device(service, "Adult A")
            let honest = try await AuthenticationTests.device(service, "Adult B")
            let greedyToken = try await AuthenticationTests.signIn(service.http, greedy)
            let honestToken = try await AuthenticationTests.signIn(service.http, honest)
            var statuses: [Int: Int] = [:]
            for _ in 0..<10 {
                let answer = try await Self.get(service, "v1/family-members", token: greedyToken)
                statuses[answer.status, default: 0] += 1
                if answer.status == 429 { Self.expectRateLimited(answer) }
            }
            #expect(statuses == [200: 6, 429: 4])
            func enrolmentChallenges(_ token: String, _ count: Int) async throws -> [Int: Int] {
                var statuses: [Int: Int] = [:]
                for _ in 0..<count {
                    let answer = try await Self.send(service, "POST", "v1/enrolment-challenges", token: token, json: [String: String]())
                    statuses[answer.status, default: 0] += 1
                    if answer.status == 429 { Self.expectRateLimited(answer) }
                }
                return statuses
            }
            // A's phone: enrolling its tablet takes two (a challenge and the enrolment), one more
            // challenge makes its 3; the next are refused (without spending the user's budget).
            let second = try await greedy.session.addDevice(name: "Adult A's tablet")
            #expect(try await enrolmentChallenges(greedyToken, 3) == [200: 1, 429: 2])
            // The tablet has 3 of its own, but its user has 5 - 3 = 2 left.
            let secondToken = try await second.client.bearerToken()
            #expect(try await enrolmentChallenges(secondToken, 3) == [200: 2, 429: 1])
            #expect(try await Self.get(service, "v1/family-members", token: secondToken).status == 200)
            #expect(try await Self.get(service, "v1/family-members", token: honestToken).status == 200)
            #expect(try await enrolmentChallenges(honestToken, 1) == [200: 1])
        }
    }

    /// A signed registration of a new user with one device, as `UserSession.register` sends it.
    static func registration() throws -> RegisterUserRequest {
        let request = try RegisterUserRequest.signed(
            keys: UserKeys.generate(), displayName: "Flood",
            device: RegisterDeviceRequest(
                deviceID: UUID(), name: "Flood's phone", signingPublicKey: Data(Ed25519.PrivateKey().publicKey.rawRepresentation)))
        return request
    }

    /// Source addresses as limits count them: the peer unless it is a trusted proxy, then the
    /// last `X-Forwarded-For` entry; IPv6 per /64, IPv4-mapped as IPv4.
    @Test func sourceAddressesAreCountedAsThePeerUnlessItIsATrustedProxy() {
        let trusted: Set<String> = ["10.0.0.1"]
        #expect(ClientAddress.key(peer: "192.0.2.7", forwardedFor: "203.0.113.1", trustedProxies: trusted) == "192.0.2.7")
        #expect(ClientAddress.key(peer: "10.0.0.1", forwardedFor: "6.6.6.6, 203.0.113.1", trustedProxies: trusted) == "203.0.113.1")
        #expect(ClientAddress.key(peer: "10.0.0.1", forwardedFor: "junk", trustedProxies: trusted) == "10.0.0.1")
        #expect(ClientAddress.key(peer: "2001:db8:1:2:3:4:5:6", forwardedFor: nil, trustedProxies: []) == "2001:db8:1:2::/64")
        #expect(ClientAddress.key(peer: "::ffff:192.0.2.9", forwardedFor: nil, trustedProxies: []) == "192.0.2.9")
        #expect(ClientAddress.key(peer: nil, forwardedFor: nil, trustedProxies: []) == "unknown")
    }

    /// The token bucket, on a clock the test moves: a burst, then one request per 60/perMinute
    /// seconds, `Retry-After` rounded up; a bounded number of keys, new ones sharing one
    /// overflow bucket when every bucket is in use.
    @Test func theTokenBucketEarnsBackItsRateAndBoundsItsKeys() {
        final class Clock: Sendable {
            let start = ContinuousClock.now
            let offset = Mutex<Duration>(.zero)
            var now: ContinuousClock.Instant { start + offset.withLock { $0 } }
        }
        let clock = Clock()
        let limiter = RateLimiter(rate: .init(burst: 3, perMinute: 6), maxKeys: 2, now: { clock.now })
        #expect((0..<3).map { _ in limiter.acquire("a") } == [.allowed, .allowed, .allowed])
        #expect(limiter.acquire("a") == .refused(retryAfter: 10))
        clock.offset.withLock { $0 = .seconds(4) }
        #expect(limiter.acquire("a") == .refused(retryAfter: 6))
        clock.offset.withLock { $0 = .seconds(10) }
        #expect(limiter.acquire("a") == .allowed)
        #expect(limiter.acquire("b") == .allowed)
        // Two keys in use: a third shares the overflow bucket (3 at once), the map stays at 2.
        #expect((0..<4).map { index in limiter.acquire("c\(index)") } == [.allowed, .allowed, .allowed, .refused(retryAfter: 10)])
        #expect(limiter.keys == 2)
        // Once "a" and "b" have earned back their whole burst, they are forgotten for new keys.
        clock.offset.withLock { $0 = .seconds(60) }
        #expect(limiter.acquire("d") == .allowed)
        #expect(limiter.keys == 1)
        #expect(RateLimiter(rate: .init(burst: 0, perMinute: 0)).acquire("x") == .refused(retryAfter: 3600))
    }

    @Test func limitsAreReadFromTheEnvironment() throws {
        let configuration = try GrantServiceConfiguration(environment: [
            "RESCIND_GRANT_CHALLENGES_PER_ADDRESS_PER_MINUTE": "7", "RESCIND_GRANT_REQUESTS_PER_DEVICE_PER_MINUTE": "0",
            "RESCIND_GRANT_OPEN_CHALLENGES_PER_DEVICE": "3", "RESCIND_GRANT_MAX_IN_FLIGHT": "9",
            "RESCIND_GRANT_TRUSTED_PROXIES": "10.0.0.1, ::ffff:10.0.0.2,2001:db8::1",
        ])
        #expect(configuration.limits.challengesPerAddress == .perMinute(7, burstSeconds: 10))
        #expect(configuration.limits.requestsPerDevice == .perMinute(0))
        #expect(configuration.limits.openChallengesPerDevice == 3)
        #expect(configuration.limits.maxInFlight == 9)
        #expect(configuration.limits.trustedProxies == ["10.0.0.1", "10.0.0.2", "2001:db8::1"])
        #expect(GrantServiceConfiguration().limits.registrationsPerAddress == .perMinute(300, burstSeconds: 10))
        #expect(throws: (any Error).self) {
            try GrantServiceConfiguration(environment: ["RESCIND_GRANT_TRUSTED_PROXIES": "proxy.internal"])
        }
        #expect(throws: (any Error).self) {
            try GrantServiceConfiguration(environment: ["RESCIND_GRANT_MAX_IN_FLIGHT": "0"])
        }
    }
}
