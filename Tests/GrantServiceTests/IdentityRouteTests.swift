import Foundation
import RescindClient
import RescindCrypto
import RescindProtocol
import RescindTestSupport
import Testing

/// Users and devices: registration, lookup, listing and retirement.
@Suite struct IdentityRouteTests {
    static func registration(keys: UserKeys = .generate(), deviceKey: Ed25519.PrivateKey = Ed25519.PrivateKey(), name: String = "Adult A") throws -> RegisterUserRequest {
        try RegisterUserRequest.signed(
            keys: keys, displayName: name,
            device: RegisterDeviceRequest(deviceID: UUID(), name: "phone", signingPublicKey: Data(deviceKey.publicKey.rawRepresentation)))
    }

    /// Re-signs after a change, so that only the change is wrong.
    static func resigned(_ request: RegisterUserRequest, by keys: UserKeys) throws -> RegisterUserRequest {
        var request = request
        request.signature = Data(keys.identityKey.signature(for: try request.signingInput()))
        return request
    }

    @Test func registerUser() async throws {
        try await GrantServiceHarness.with { service in
            let http = service.http
            let keys = UserKeys.generate()
            let request = try Self.registration(keys: keys)

            let created = try await http.send("POST", "v1/users", json: request)
            #expect(created.status == 201)
            #expect(
                try created.decode(UserResponse.self)
                    == UserResponse(
                        userID: keys.userID, displayName: "Adult A", agreementPublicKey: request.agreementPublicKey,
                        identityPublicKey: request.identityPublicKey))

            // 409: the same user again, or another user reusing the device's key.
            expectError(try await http.send("POST", "v1/users", json: request), 409, "already_registered")
            let other = UserKeys.generate()
            var reusedDevice = try Self.registration(keys: other)
            reusedDevice.device.signingPublicKey = request.device.signingPublicKey
            expectError(
                try await http.send("POST", "v1/users", json: try Self.resigned(reusedDevice, by: other)), 409,
                "already_registered")

            // 422: a signature that does not cover what is sent, a key that is not a key.
            var tampered = try Self.registration()
            tampered.displayName = "Mallory"
            expectError(try await http.send("POST", "v1/users", json: tampered), 422, "bad_signature")
            let weak = UserKeys.generate()
            var weakKey = try Self.registration(keys: weak)
            weakKey.agreementPublicKey = Data(count: 32)  // small-order point
            expectError(
                try await http.send("POST", "v1/users", json: try Self.resigned(weakKey, by: weak)), 422,
                "invalid_public_key")
            var shortKey = try Self.registration(keys: weak)
            shortKey.identityPublicKey = Data(count: 31)
            expectError(try await http.send("POST", "v1/users", json: shortKey), 422, "invalid_public_key")

            // 400: not JSON, a missing field, an empty name.
            expectError(try await http.send("POST", "v1/users", text: "{not json"), 400, "bad_request")
            expectError(try await http.send("POST", "v1/users", text: #"{"user_id":"\#(UUID())"}"#), 400, "bad_request")
            let nameless = UserKeys.generate()
            expectError(
                try await http.send("POST", "v1/users", json: try Self.registration(keys: nameless, name: "")), 400,
                "bad_request")

            // 413: over the 1 MiB body limit.
            let huge = UserKeys.generate()
            expectError(
                try await http.send(
                    "POST", "v1/users",
                    json: try Self.registration(keys: huge, name: String(repeating: "x", count: 1 << 20))),
                413, "payload_too_large")
            // Nothing but the first registration was stored.
            #expect(try await service.count("SELECT count(*) FROM users") == 1)
        }
    }

    @Test func usersAndMe() async throws {
        try await GrantServiceHarness.with { service in
            let adultA = try await service.user("Adult A")
            let adultB = try await service.user("Adult B")
            let http = service.http
            let token = try await adultA.token()

            let me = try await adultA.client.me()
            #expect(me.user.userID == adultA.keys.userID)
            #expect(me.device.deviceID == adultA.deviceID)
            let b = try await adultA.client.user(adultB.keys.userID)
            #expect(b.agreementPublicKey == Data(adultB.keys.agreementKey.publicKey.rawRepresentation))

            expectError(try await http.send("GET", "v1/users/\(UUID())", token: token), 404, "not_found")
            expectError(try await http.send("GET", "v1/users/not-a-uuid", token: token), 400)
            expectError(try await http.send("GET", "v1/users/\(adultB.keys.userID)"), 401, "unauthenticated")
            expectError(try await http.send("GET", "v1/me"), 401, "unauthenticated")
        }
    }

    @Test func registerAndListDevices() async throws {
        try await GrantServiceHarness.with { service in
            let adultA = try await service.user("Adult A")
            let http = service.http
            let token = try await adultA.token()
            let iPadKey = Ed25519.PrivateKey()
            let iPad = RegisterDeviceRequest(
                deviceID: UUID(), name: "iPad", kind: .tablet, signingPublicKey: Data(iPadKey.publicKey.rawRepresentation))

            let created = try await http.send("POST", "v1/devices", token: token, json: try await Self.enrolment(iPad, by: adultA))
            #expect(created.status == 201, "\(created.text)")
            let device = try created.decode(DeviceResponse.self)
            #expect(device.userID == adultA.keys.userID && device.retiredAt == nil && device.kind == .tablet)
            let listed = try await adultA.client.devices()
            #expect(listed.map(\.deviceID) == [adultA.deviceID, iPad.deviceID])
            // The caller's device has been used (this very call); the iPad never signed in.
            #expect(listed[0].lastUsedAt != nil && listed[1].lastUsedAt == nil)

            // 409 after a valid signature: the same device id, or another id with the same key.
            expectError(
                try await http.send("POST", "v1/devices", token: token, json: try await Self.enrolment(iPad, by: adultA)), 409,
                "already_registered")
            var sameKey = iPad
            sameKey.deviceID = UUID()
            expectError(
                try await http.send("POST", "v1/devices", token: token, json: try await Self.enrolment(sameKey, by: adultA)),
                409, "already_registered")
            let badKey = RegisterDeviceRequest(deviceID: UUID(), name: "watch", signingPublicKey: Data(count: 12))
            expectError(
                try await http.send("POST", "v1/devices", token: token, json: try await Self.enrolment(badKey, by: adultA)),
                422, "invalid_public_key")
            let nameless = RegisterDeviceRequest(deviceID: UUID(), name: "", signingPublicKey: Data(Ed25519.PrivateKey().publicKey.rawRepresentation))
            expectError(
                try await http.send("POST", "v1/devices", token: token, json: try await Self.enrolment(nameless, by: adultA)),
                400, "bad_request")
            expectError(try await http.send("POST", "v1/devices", token: token, text: "[]"), 400, "bad_request")
            expectError(
                try await http.send(
                    "POST", "v1/devices", token: token,
                    text: #"{"device":{"device_id":"\#(UUID())","name":"x","kind":"toaster","signing_public_key":"\#(iPad.signingPublicKey.base64EncodedString())"},"challenge_id":"\#(UUID())","signature":""}"#),
                400, "bad_request")
            expectError(try await http.send("POST", "v1/devices", json: nameless), 401, "unauthenticated")
            expectError(try await http.send("POST", "v1/enrolment-challenges"), 401, "unauthenticated")
            expectError(try await http.send("GET", "v1/devices"), 401, "unauthenticated")
            #expect(try await service.count("SELECT count(*) FROM devices") == 2)
        }
    }

    /// `device` enrolled as `session`'s user asks: a fresh challenge, signed with the identity key.
    static func enrolment(_ device: RegisterDeviceRequest, by session: UserSession) async throws -> EnrolDeviceRequest {
        let challenge = try await session.client.enrolmentChallenge()
        return try DeviceEnrolment.request(userID: session.keys.userID, challenge: challenge, device: device) {
            session.keys.identityKey.signature(for: $0)
        }
    }

    @Test func retireDevice() async throws {
        try await GrantServiceHarness.with { service in
            let adultA = try await service.user("Adult A")
            let adultB = try await service.user("Adult B")
            let iPad = try await adultA.addDevice(name: "Adult A's iPad")
            let http = service.http
            let token = try await adultA.token()

            expectError(try await http.send("DELETE", "v1/devices/\(adultB.deviceID)", token: token), 403, "forbidden")
            expectError(try await http.send("DELETE", "v1/devices/\(UUID())", token: token), 404, "not_found")
            expectError(try await http.send("DELETE", "v1/devices/not-a-uuid", token: token), 400, "bad_request")
            expectError(try await http.send("DELETE", "v1/devices/\(iPad.deviceID)"), 401, "unauthenticated")

            let retired = try await http.send("DELETE", "v1/devices/\(iPad.deviceID)", token: token)
            #expect(retired.status == 204)
            let listed = try await adultA.client.devices().first { $0.deviceID == iPad.deviceID }
            #expect(listed?.retiredAt != nil)
            // The retired device can no longer sign in.
            await expectFailure(401, "device_retired") { try await iPad.client.me() }
        }
    }
}
