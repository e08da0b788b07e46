import Foundation
import RescindClient
import RescindCrypto
import RescindProtocol
import RescindTestSupport
import Testing

/// Enrolment proves the user, not a token: `POST /v1/devices` needs the user's identity
/// key's signature over a fresh single-use challenge, and anything else is refused with a
/// JSON error and changes nothing.
@Suite struct DeviceEnrolmentTests {
    static func newDevice(_ name: String = "Adult A's laptop", kind: DeviceKind? = .laptop) -> RegisterDeviceRequest {
        RegisterDeviceRequest(
            deviceID: UUID(), name: name, kind: kind, signingPublicKey: Data(Ed25519.PrivateKey().publicKey.rawRepresentation))
    }

    /// An enrolment of `device` over `challenge` for `userID`, signed by `key`.
    static func signed(
        _ device: RegisterDeviceRequest, challenge: ChallengeResponse, userID: UUID, key: Ed25519.PrivateKey
    ) throws -> EnrolDeviceRequest {
        try DeviceEnrolment.request(userID: userID, challenge: challenge, device: device) { key.signature(for: $0) }
    }

    @Test("a signed enrolment adds the device, which can then sign in; the signature works once")
    func signedEnrolment() async throws {
        try await GrantServiceHarness.with { service in
            let adultA = try await service.user("Adult A")
            let laptop = try await adultA.addDevice(name: "Adult A's laptop", kind: .laptop)
            #expect(try await laptop.client.me().device.kind == .laptop)

            // The same request again: the challenge is spent, so the replay is refused before
            // anything is looked at (not a 409 that would reveal the device exists).
            let http = service.http
            let token = try await adultA.token()
            let device = Self.newDevice()
            let enrolment = try await IdentityRouteTests.enrolment(device, by: adultA)
            #expect(try await http.send("POST", "v1/devices", token: token, json: enrolment).status == 201)
            expectError(try await http.send("POST", "v1/devices", token: token, json: enrolment), 422, "invalid_challenge")
            var replayedForAnother = enrolment
            replayedForAnother.device = Self.newDevice("Mallory's phone")
            expectError(
                try await http.send("POST", "v1/devices", token: token, json: replayedForAnother), 422, "invalid_challenge")
            #expect(try await service.count("SELECT count(*) FROM devices") == 3)
        }
    }

    @Test("wrong signatures, another user's or a spent or expired challenge, and the old unsigned body are refused; nothing changes")
    func refusedEnrolments() async throws {
        try await GrantServiceHarness.with { service in
            let adultA = try await service.user("Adult A")
            let adultB = try await service.user("Adult B")
            let http = service.http
            let token = try await adultA.token()
            let userID = adultA.keys.userID
            let phoneKey = Ed25519.PrivateKey()
            let phone = try await adultA.addDevice(name: "Adult A's phone", deviceKey: phoneKey)
            let phoneToken = try await phone.token()
            let before = try await service.count("SELECT count(*) FROM devices")

            // The old body: a device with no signature at all.
            expectError(try await http.send("POST", "v1/devices", token: token, json: Self.newDevice()), 400, "bad_request")
            // Signed by the calling device's own key, by another user's identity key, by a random key.
            for key in [phoneKey, adultB.keys.identityKey, Ed25519.PrivateKey()] {
                let challenge = try await phone.client.enrolmentChallenge()
                expectError(
                    try await http.send(
                        "POST", "v1/devices", token: phoneToken,
                        json: try Self.signed(Self.newDevice(), challenge: challenge, userID: userID, key: key)),
                    422, "bad_signature")
            }
            // Signed for one device, sent with another (a name changed, a kind added, another key).
            var variants = [Self.newDevice(), Self.newDevice(), Self.newDevice()]
            let signedFor = variants[0]
            variants[0].name = "Mallory's phone"
            variants[1] = signedFor
            variants[1].kind = .phone
            variants[2] = signedFor
            variants[2].signingPublicKey = Data(Ed25519.PrivateKey().publicKey.rawRepresentation)
            for variant in variants {
                let challenge = try await adultA.client.enrolmentChallenge()
                var request = try Self.signed(signedFor, challenge: challenge, userID: userID, key: adultA.keys.identityKey)
                request.device = variant
                expectError(try await http.send("POST", "v1/devices", token: token, json: request), 422, "bad_signature")
            }
            // Signed for another user id (the statement names the user).
            let challenge = try await adultA.client.enrolmentChallenge()
            expectError(
                try await http.send(
                    "POST", "v1/devices", token: token,
                    json: try Self.signed(
                        Self.newDevice(), challenge: challenge, userID: adultB.keys.userID, key: adultA.keys.identityKey)),
                422, "bad_signature")
            // That failure spent the challenge: the right signature over it is refused too.
            expectError(
                try await http.send(
                    "POST", "v1/devices", token: token,
                    json: try Self.signed(Self.newDevice(), challenge: challenge, userID: userID, key: adultA.keys.identityKey)),
                422, "invalid_challenge")
            // Another user's challenge, properly signed by that user, sent with A's token.
            let bChallenge = try await adultB.client.enrolmentChallenge()
            expectError(
                try await http.send(
                    "POST", "v1/devices", token: token,
                    json: try Self.signed(
                        Self.newDevice(), challenge: bChallenge, userID: adultB.keys.userID, key: adultB.keys.identityKey)),
                422, "invalid_challenge")
            // A challenge nobody issued, and one past its lifetime.
            let made = ChallengeResponse(challengeID: UUID(), nonce: Data(count: 32), expiresAt: Date())
            expectError(
                try await http.send(
                    "POST", "v1/devices", token: token,
                    json: try Self.signed(Self.newDevice(), challenge: made, userID: userID, key: adultA.keys.identityKey)),
                422, "invalid_challenge")
            let expired = try await adultA.client.enrolmentChallenge()
            try await service.withConnection {
                try await $0.execute(
                    "UPDATE enrolment_challenges SET expires_at = now() - interval '1 second' WHERE challenge_id = \(expired.challengeID)")
            }
            expectError(
                try await http.send(
                    "POST", "v1/devices", token: token,
                    json: try Self.signed(Self.newDevice(), challenge: expired, userID: userID, key: adultA.keys.identityKey)),
                422, "invalid_challenge")

            #expect(try await service.count("SELECT count(*) FROM devices") == before)
        }
    }
}
