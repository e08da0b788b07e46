import Foundation
import RescindClient
import RescindCrypto
import RescindPostgres
import RescindProtocol
import RescindServiceSupport
import RescindTestSupport
import Testing

/// A device that keeps its token alive renews it in its own lane (`RenewalAuthenticator`): an
/// anonymous flood that has spent its source address's budgets cannot refuse it, and a token
/// buys nothing more than its own device's renewal.
@Suite struct TokenRenewalTests {
    /// The attacker shares the honest phone's address (a neighbour behind the same router) and
    /// moves first: it spends the address's challenge and token budgets. Promised: the phone's
    /// client renews with its live token, again and again, each time a new token; a client of
    /// the same device without a token is refused like the attacker; the phone's token cannot
    /// renew another device, a junk token is no way around the budget, and a stolen token
    /// without the device key mints nothing.
    @Test func aLiveTokenRenewsWhileTheAddressBudgetIsSpent() async throws {
        try await GrantServiceHarness.with({
            $0.limits.challengesPerAddress = FloodTests.budget(4)
            $0.limits.tokensPerAddress = FloodTests.budget(4)
        }) { service in
            let phone = try await AuthenticationTests.device(service, "Adult A")
            let other = try await AuthenticationTests.device(service, "Adult B")
            let client = phone.session.client
            let first = try await client.bearerToken()

            // The flood: anonymous challenges and answers from 127.0.0.1 until both budgets are spent.
            var statuses: [Int: Int] = [:]
            for _ in 0..<6 {
                let answer = try await service.http.send("POST", "v1/auth/challenge", json: ChallengeRequest(deviceID: other.id))
                statuses[answer.status, default: 0] += 1
            }
            for _ in 0..<6 {
                let junk = TokenRequest(challengeID: UUID(), deviceID: other.id, signature: Data(repeating: 1, count: 64))
                statuses[try await service.http.send("POST", "v1/auth/token", json: junk).status, default: 0] += 1
            }
            #expect(statuses[429, default: 0] >= 4, "\(statuses)")
            let anonymous = try await service.http.send("POST", "v1/auth/challenge", json: ChallengeRequest(deviceID: phone.id))
            expectError(anonymous, 429, "rate_limited")
            let junk = TokenRequest(challengeID: UUID(), deviceID: phone.id, signature: Data(repeating: 1, count: 64))
            expectError(try await service.http.send("POST", "v1/auth/token", json: junk), 429, "rate_limited")

            var tokens = [first]
            for _ in 0..<3 {
                try await client.renewToken()
                tokens.append(try await client.bearerToken())
            }
            #expect(Set(tokens).count == 4)
            #expect(try await service.http.send("GET", "v1/me", token: tokens.last!).status == 200)

            let fresh = client.authenticated(as: .init(deviceID: phone.id, signingKey: phone.key))
            await #expect(throws: GrantServiceError.self) { try await fresh.renewToken() }

            let live = tokens.last!
            let forOther = try await service.http.send("POST", "v1/auth/challenge", token: live, json: ChallengeRequest(deviceID: other.id))
            expectError(forOther, 403, "forbidden")
            let challenges: PostgresQuery = "SELECT count(*) FROM auth_challenges WHERE device_id = \(other.id)"
            let openForOther = try await service.count(challenges)
            let junkToken = try await service.http.send("POST", "v1/auth/challenge", token: "junk", json: ChallengeRequest(deviceID: other.id))
            expectError(junkToken, 429, "rate_limited")
            #expect(try await service.count(challenges) == openForOther)

            // A thief with the token but not the key: a challenge, but no token for a wrong signature.
            let challenge = try await service.http.send("POST", "v1/auth/challenge", token: live, json: ChallengeRequest(deviceID: phone.id))
            #expect(challenge.status == 200, "\(challenge.text)")
            let forged = AuthenticationTests.answer(try challenge.decode(ChallengeResponse.self), deviceID: phone.id, key: Ed25519.PrivateKey())
            expectError(try await service.http.send("POST", "v1/auth/token", token: live, json: forged), 401, "authentication_failed")
        }
    }
}
