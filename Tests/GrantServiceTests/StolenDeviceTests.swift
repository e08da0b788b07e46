import Foundation
import RescindClient
import RescindCrypto
import RescindProtocol
import RescindTestSupport
import Testing

/// The thief of the seeds' "Stolen device" scenario, against the real service and
/// PostgreSQL over HTTP: what a copy of a phone's credentials buys before and after the
/// user retires the phone from another of their devices.
@Suite struct StolenDeviceTests {
    /// Adult B with a laptop (the device the user keeps) and a phone (the one stolen), and
    /// the phone's device key.
    struct Household {
        let laptop: UserSession
        let phone: UserSession
        let phoneKey: Ed25519.PrivateKey
    }

    static func household(_ service: GrantServiceHarness) async throws -> Household {
        let laptop = try await service.user("Adult B", device: "Adult B's laptop")
        let phoneKey = Ed25519.PrivateKey()
        let phone = try await laptop.addDevice(name: "Adult B's phone", kind: .phone, deviceKey: phoneKey)
        return Household(laptop: laptop, phone: phone, phoneKey: phoneKey)
    }

    @Test("a thief holding the phone's bearer token and device key cannot enrol a device")
    func tokenAndDeviceKeyEnrolNothing() async throws {
        // Adversary: holds a live bearer token of the phone and its device key (it can mint
        // more tokens by challenge–response), not the user's identity key.
        try await GrantServiceHarness.with { service in
            let home = try await Self.household(service)
            let http = service.http
            let stolenToken = try await home.phone.token()
            let before = try await service.count("SELECT count(*) FROM devices")
            let rogueKey = Ed25519.PrivateKey()
            let rogue = RegisterDeviceRequest(
                deviceID: UUID(), name: "rogue", kind: .phone, signingPublicKey: Data(rogueKey.publicKey.rawRepresentation))

            // The token alone, in the body the route used to accept.
            expectError(try await http.send("POST", "v1/devices", token: stolenToken, json: rogue), 400, "bad_request")
            // A statement signed with every key the thief holds: the phone's key, the rogue's own.
            for key in [home.phoneKey, rogueKey] {
                let challenge = try await http.send("POST", "v1/enrolment-challenges", token: stolenToken).decode(ChallengeResponse.self)
                let enrolment = try DeviceEnrolment.request(userID: home.phone.keys.userID, challenge: challenge, device: rogue) {
                    key.signature(for: $0)
                }
                expectError(try await http.send("POST", "v1/devices", token: stolenToken, json: enrolment), 422, "bad_signature")
            }
            // Replaying a genuine enrolment the user made from the phone earlier.
            let genuine = try await IdentityRouteTests.enrolment(DeviceEnrolmentTests.newDevice("Adult B's tablet"), by: home.phone)
            #expect(try await http.send("POST", "v1/devices", token: stolenToken, json: genuine).status == 201)
            var replayed = genuine
            replayed.device = rogue
            expectError(try await http.send("POST", "v1/devices", token: stolenToken, json: replayed), 422, "invalid_challenge")
            expectError(try await http.send("POST", "v1/devices", token: stolenToken, json: genuine), 422, "invalid_challenge")

            #expect(try await service.count("SELECT count(*) FROM devices") == before + 1)
            #expect(try await service.count("SELECT count(*) FROM devices WHERE device_id = \(rogue.deviceID)") == 0)
        }
    }

    @Test("after `device retire`, every token, open challenge and even the identity key of the phone get nothing")
    func retiredPhoneGetsNothing() async throws {
        // Adversary: the whole unlocked phone — tokens, an open authentication challenge, an
        // open enrolment challenge, the device key and the user's keys from its keystore.
        try await GrantServiceHarness.with { service in
            let home = try await Self.household(service)
            let http = service.http
            let userID = home.phone.keys.userID
            let (familyMemberID, _) = try await home.laptop.createFamilyMember()
            let tokens = [try await home.phone.token(), try await AuthenticationTests.signIn(http, .init(session: home.phone, key: home.phoneKey))]
            let openChallenge = try await AuthenticationTests.challenge(http, home.phone.deviceID)
            let openEnrolment = try await home.phone.client.enrolmentChallenge()
            for token in tokens { #expect(try await http.send("GET", "v1/me", token: token).status == 200) }

            try await home.laptop.client.retireDevice(home.phone.deviceID)

            // Every request with the phone's tokens is a 401.
            for token in tokens {
                for (method, path) in [
                    ("GET", "v1/me"), ("GET", "v1/devices"), ("GET", "v1/family-members"),
                    ("GET", "v1/family-members/\(familyMemberID)/key"), ("POST", "v1/enrolment-challenges"),
                    ("DELETE", "v1/devices/\(home.laptop.deviceID)"),
                ] {
                    expectError(try await http.send(method, path, token: token), 401, "unauthenticated")
                }
            }
            // No new token: the open challenge is dead, and a new one is not issued.
            expectError(
                try await http.send(
                    "POST", "v1/auth/token",
                    json: AuthenticationTests.answer(openChallenge, deviceID: home.phone.deviceID, key: home.phoneKey)),
                401, "authentication_failed")
            expectError(
                try await http.send("POST", "v1/auth/challenge", json: ChallengeRequest(deviceID: home.phone.deviceID)), 401,
                "device_retired")
            // The open enrolment challenge, signed with the user's real identity key: refused.
            let rogue = DeviceEnrolmentTests.newDevice("rogue")
            let enrolment = try DeviceEnrolment.request(userID: userID, challenge: openEnrolment, device: rogue) {
                home.phone.keys.identityKey.signature(for: $0)
            }
            for token in tokens {
                expectError(try await http.send("POST", "v1/devices", token: token, json: enrolment), 401, "unauthenticated")
            }
            await expectFailure(401, "device_retired") { try await home.phone.client.me() }

            // Nothing of the phone's is left to use, and the user's other device is unaffected.
            for table in ["auth_tokens", "auth_challenges", "enrolment_challenges"] {
                #expect(try await service.count("SELECT count(*) FROM \(unescaped: table) WHERE device_id = \(home.phone.deviceID)") == 0)
            }
            #expect(try await service.count("SELECT count(*) FROM devices WHERE device_id = \(rogue.deviceID)") == 0)
            #expect(try await home.laptop.client.me().device.deviceID == home.laptop.deviceID)
            let phone = try #require(try await home.laptop.client.devices().first { $0.deviceID == home.phone.deviceID })
            #expect(phone.retiredAt != nil && phone.kind == .phone && phone.lastUsedAt != nil)
        }
    }

    @Test("an enrolment racing the retirement of the phone it comes from is refused")
    func enrolmentRacingRetirement() async throws {
        // Adversary: the whole unlocked phone, enrolling a device with a valid token and a
        // valid identity-key signature while the user retires the phone. The retirement
        // is held open in a transaction until the enrolment waits on the phone's row, then
        // committed: the enrolment must not slip in behind it.
        try await GrantServiceHarness.with { service in
            let home = try await Self.household(service)
            let http = service.http
            let token = try await home.phone.token()
            let rogue = DeviceEnrolmentTests.newDevice("rogue")
            let enrolment = try await IdentityRouteTests.enrolment(rogue, by: home.phone)

            let answer = try await service.withConnection { connection in
                try await connection.execute("BEGIN")
                try await connection.execute(
                    "UPDATE devices SET retired_at = now() WHERE device_id = \(home.phone.deviceID)")
                let request = Task { try await http.send("POST", "v1/devices", token: token, json: enrolment) }
                // Wait until the enrolment waits for this transaction (a lock on its id).
                try await service.eventually("the enrolment waits on the retired phone's row") {
                    try await connection.query(
                        """
                        SELECT count(*) FROM pg_locks
                        WHERE locktype = 'transactionid' AND NOT granted AND transactionid = pg_current_xact_id()::xid
                        """
                    ).first!.decode(Int.self, column: 0) == 1
                }
                try await connection.execute("COMMIT")
                return try await request.value
            }
            expectError(answer, 401, "unauthenticated")
            #expect(try await service.count("SELECT count(*) FROM devices WHERE device_id = \(rogue.deviceID)") == 0)
        }
    }

    @Test("retiring someone else's device is refused and changes nothing")
    func retiringAnotherUsersDevice() async throws {
        // Adversary: another user of the service, with their own valid token.
        try await GrantServiceHarness.with { service in
            let home = try await Self.household(service)
            let mallory = try await service.user("Mallory")
            let http = service.http
            let phoneToken = try await home.phone.token()
            let malloryToken = try await mallory.token()

            let refused = try await http.send("DELETE", "v1/devices/\(home.phone.deviceID)", token: malloryToken)
            expectError(refused, 403, "forbidden")
            #expect(try await http.send("GET", "v1/me", token: phoneToken).status == 200)
            #expect(try await home.laptop.client.devices().allSatisfy { $0.retiredAt == nil })
            #expect(try await service.count("SELECT count(*) FROM auth_tokens WHERE device_id = \(home.phone.deviceID)") == 1)
        }
    }
}
