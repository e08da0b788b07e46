import Foundation
import RescindClient
import RescindCrypto
import RescindProtocol
import RescindTestSupport
import Testing

/// Device challenge–response, bearer tokens and what ends them.
@Suite struct AuthenticationTests {
    /// A user whose device key the test holds, to answer challenges by hand.
    struct Device {
        let session: UserSession
        let key: Ed25519.PrivateKey
        var id: UUID { session.deviceID }
    }

    static func device(_ service: GrantServiceHarness, _ name: String) async throws -> Device {
        let key = Ed25519.PrivateKey()
        let session = try await UserSession.register(
            keys: .generate(), displayName: name, deviceName: "\(name)'s phone", deviceKey: key, baseURL: service.baseURL, tls: service.clientTLS)
        return Device(session: session, key: key)
    }

    static func challenge(_ http: RawHTTP, _ deviceID: UUID) async throws -> ChallengeResponse {
        let answer = try await http.send("POST", "v1/auth/challenge", json: ChallengeRequest(deviceID: deviceID))
        #expect(answer.status == 200, "\(answer.text)")
        return try answer.decode(ChallengeResponse.self)
    }

    static func answer(_ challenge: ChallengeResponse, deviceID: UUID, key: Ed25519.PrivateKey) -> TokenRequest {
        let signature = key.signature(
            for: DeviceAuthentication.signingInput(challengeID: challenge.challengeID, deviceID: deviceID, nonce: challenge.nonce))
        return TokenRequest(challengeID: challenge.challengeID, deviceID: deviceID, signature: Data(signature))
    }

    static func signIn(_ http: RawHTTP, _ device: Device) async throws -> String {
        let challenge = try await challenge(http, device.id)
        let answer = try await http.send("POST", "v1/auth/token", json: answer(challenge, deviceID: device.id, key: device.key))
        #expect(answer.status == 200, "\(answer.text)")
        return try answer.decode(TokenResponse.self).token
    }

    @Test func challengeAndToken() async throws {
        try await GrantServiceHarness.with { service in
            let http = service.http
            let phone = try await Self.device(service, "Adult A")
            let other = try await Self.device(service, "Adult B")

            let challenge = try await Self.challenge(http, phone.id)
            #expect(challenge.nonce.count == 32)
            let tokenRequest = Self.answer(challenge, deviceID: phone.id, key: phone.key)
            let issued = try await http.send("POST", "v1/auth/token", json: tokenRequest)
            #expect(issued.status == 200)
            let token = try issued.decode(TokenResponse.self)
            #expect(token.expiresAt > Date())
            let me = try await http.send("GET", "v1/me", token: token.token)
            #expect(me.status == 200)
            #expect(try me.decode(MeResponse.self).device.deviceID == phone.id)

            // 401: a replayed answer, a wrong key, an answer redirected to another device.
            expectError(try await http.send("POST", "v1/auth/token", json: tokenRequest), 401, "authentication_failed")
            let fresh = try await Self.challenge(http, phone.id)
            expectError(
                try await http.send("POST", "v1/auth/token", json: Self.answer(fresh, deviceID: phone.id, key: other.key)),
                401, "authentication_failed")
            // The failed attempt spent the challenge: the right answer is refused too.
            expectError(
                try await http.send("POST", "v1/auth/token", json: Self.answer(fresh, deviceID: phone.id, key: phone.key)),
                401, "authentication_failed")
            let otherChallenge = try await Self.challenge(http, other.id)
            expectError(
                try await http.send(
                    "POST", "v1/auth/token", json: Self.answer(otherChallenge, deviceID: phone.id, key: phone.key)),
                401, "authentication_failed")

            // 404: no such device; 400: malformed bodies.
            expectError(try await http.send("POST", "v1/auth/challenge", json: ChallengeRequest(deviceID: UUID())), 404, "not_found")
            expectError(try await http.send("POST", "v1/auth/challenge", text: #"{"device_id":"nope"}"#), 400, "bad_request")
            expectError(try await http.send("POST", "v1/auth/token", text: "{}"), 400, "bad_request")
        }
    }

    @Test func bearerTokensAreCheckedAndStoredHashed() async throws {
        try await GrantServiceHarness.with { service in
            let http = service.http
            let phone = try await Self.device(service, "Adult A")
            let token = try await Self.signIn(http, phone)

            expectError(try await http.send("GET", "v1/me"), 401, "unauthenticated")
            expectError(try await http.send("GET", "v1/me", token: randomToken()), 401, "unauthenticated")
            expectError(try await http.send("GET", "v1/me", authorization: "Basic \(token)"), 401, "unauthenticated")
            expectError(try await http.send("GET", "v1/me", authorization: "Bearer "), 401, "unauthenticated")
            expectError(try await http.send("GET", "v1/me", token: token + "x"), 401, "unauthenticated")
            expectError(
                try await http.send("GET", "v1/me", token: String(repeating: "a", count: 4096)), 401, "unauthenticated")

            // Only the SHA-256 of the token is stored; no column holds the token itself.
            let hash = Data(SHA256.hash(Array(token.utf8)))
            #expect(try await service.count("SELECT count(*) FROM auth_tokens WHERE token_hash = \(hash)") == 1)
            #expect(try await service.count("SELECT count(*) FROM auth_tokens t WHERE strpos(t::text, \(token)) > 0") == 0)
            #expect(
                try await service.count(
                    "SELECT count(*) FROM auth_tokens t WHERE strpos(t::text, encode(convert_to(\(token), 'UTF8'), 'hex')) > 0")
                    == 0)
        }
    }

    @Test func retiringADeviceEndsItsTokens() async throws {
        try await GrantServiceHarness.with { service in
            let http = service.http
            let phone = try await Self.device(service, "Adult A")
            let iPadKey = Ed25519.PrivateKey()
            let iPad = Device(session: try await phone.session.addDevice(name: "iPad", deviceKey: iPadKey), key: iPadKey)
            let iPadToken = try await Self.signIn(http, iPad)
            let pendingChallenge = try await Self.challenge(http, iPad.id)
            #expect(try await http.send("GET", "v1/me", token: iPadToken).status == 200)

            try await phone.session.client.retireDevice(iPad.id)

            expectError(try await http.send("GET", "v1/me", token: iPadToken), 401, "unauthenticated")
            #expect(try await service.count("SELECT count(*) FROM auth_tokens WHERE device_id = \(iPad.id)") == 0)
            expectError(
                try await http.send(
                    "POST", "v1/auth/token", json: Self.answer(pendingChallenge, deviceID: iPad.id, key: iPad.key)),
                401, "authentication_failed")
            expectError(try await http.send("POST", "v1/auth/challenge", json: ChallengeRequest(deviceID: iPad.id)), 401, "device_retired")
            // The phone is unaffected.
            #expect(try await phone.session.client.me().device.deviceID == phone.id)
        }
    }

    @Test func tokensExpire() async throws {
        try await GrantServiceHarness.with({ $0.lifetimes.token = .seconds(2) }) { service in
            let http = service.http
            let phone = try await Self.device(service, "Adult A")
            let challenge = try await Self.challenge(http, phone.id)
            let issued = try await http.send("POST", "v1/auth/token", json: Self.answer(challenge, deviceID: phone.id, key: phone.key))
            let token = try issued.decode(TokenResponse.self)
            #expect(try await http.send("GET", "v1/me", token: token.token).status == 200)
            try await Task.sleep(for: .seconds(token.expiresAt.timeIntervalSinceNow + 0.1))
            expectError(try await http.send("GET", "v1/me", token: token.token), 401, "unauthenticated")
        }
    }
}

/// A random token-shaped string no one was issued.
func randomToken() -> String {
    Data(SecureRandom.bytes(count: 32)).base64EncodedString()
        .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        .replacingOccurrences(of: "=", with: "")
}
