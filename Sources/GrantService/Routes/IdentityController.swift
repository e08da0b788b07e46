import Foundation
import Hummingbird
import RescindCrypto
import RescindProtocol
import RescindServiceSupport

/// Registration and device authentication (challenge–response with the device's Ed25519 key).
struct IdentityController {
    let identities: IdentityStore
    let syncStates: DeviceSyncStore
    let lifetimes: GrantServiceConfiguration.Lifetimes
    let limits: GrantServiceConfiguration.Limits
    let metrics: GrantMetrics

    func addPublicRoutes(to group: RouterGroup<GrantRequestContext>) {
        group.post("users", use: registerUser)
        group.post("auth/challenge", use: challenge)
        group.post("auth/token", use: token)
    }

    func addAuthenticatedRoutes(to group: RouterGroup<GrantRequestContext>) {
        group.get("me", use: me)
        group.get("users/:userID", use: user)
        group.post("enrolment-challenges", use: enrolmentChallenge)
        group.post("devices", use: registerDevice)
        group.get("devices", use: devices)
        group.delete("devices/:deviceID", use: retireDevice)
        group.put("devices/:deviceID/certificate", use: certify)
    }

    @Sendable func registerUser(_ request: Request, context: GrantRequestContext) async throws -> EditedResponse<UserResponse> {
        let body = try await request.decode(as: RegisterUserRequest.self, context: context)
        try Validation.displayName(body.displayName)
        try Validation.deviceName(body.device.name)
        _ = try Validation.agreementKey(body.agreementPublicKey)
        let identityKey = try Validation.signingKey(body.identityPublicKey, field: "identity_public_key")
        _ = try Validation.signingKey(body.device.signingPublicKey, field: "device.signing_public_key")
        let input = try body.signingInput()
        guard identityKey.isValidSignature([UInt8](body.signature), for: input) else {
            throw APIError.unprocessable("bad_signature", "the registration must be signed with the identity key")
        }
        // A recovery key is registered only by whoever holds it, and is nobody's other key.
        if let recoveryPublicKey = body.recoveryPublicKey {
            let recoveryKey = try Validation.signingKey(recoveryPublicKey, field: "recovery_public_key")
            guard let signature = body.recoverySignature, recoveryKey.isValidSignature([UInt8](signature), for: input) else {
                throw APIError.unprocessable("bad_signature", "a recovery key must be registered with its own signature over the registration")
            }
            guard recoveryPublicKey != body.identityPublicKey, recoveryPublicKey != body.device.signingPublicKey else {
                throw APIError.unprocessable("invalid_field", "recovery_public_key must be a key of its own")
            }
            if let binding = body.recoveryBinding, !RecoveryKeyBinding.isValid(
                binding, userID: body.userID, identityPublicKey: body.identityPublicKey, recoveryPublicKey: recoveryPublicKey) {
                throw APIError.unprocessable("bad_signature", "recovery_binding must be the identity key's binding of the recovery key")
            }
        } else if body.recoverySignature != nil || body.recoveryBinding != nil {
            throw APIError.unprocessable("invalid_field", "recovery_signature or recovery_binding without recovery_public_key")
        }
        return EditedResponse(status: .created, response: try await identities.registerUser(body))
    }

    /// A fresh single-use challenge for enrolling another device of the caller's user.
    @Sendable func enrolmentChallenge(_ request: Request, context: GrantRequestContext) async throws -> ChallengeResponse {
        let caller = try context.requireIdentity()
        // Nothing to read, but a body that is not the documented (empty) object is refused, not ignored.
        let body = try await request.collectBody(context: context)
        if body.readableBytes > 0, !((try? JSONSerialization.jsonObject(with: Data(buffer: body))) is [String: Any]) {
            throw APIError.badRequest("the body must be empty or a JSON object")
        }
        return try await identities.createEnrolmentChallenge(
            userID: caller.userID, deviceID: caller.deviceID, nonce: Data(SecureRandom.bytes(count: 32)),
            lifetime: lifetimes.challenge)
    }

    /// Enrols a device: the bearer token says which user; the user's identity key's
    /// signature over a fresh challenge says the user wants it. A token alone enrols nothing.
    @Sendable func registerDevice(_ request: Request, context: GrantRequestContext) async throws -> EditedResponse<DeviceResponse> {
        let caller = try context.requireIdentity()
        let body: EnrolDeviceRequest
        do {
            body = try await request.decode(as: EnrolDeviceRequest.self, context: context)
        } catch let error as APIError where error.code == "bad_request" {
            throw APIError.badRequest(
                "\(error.message); an enrolment is {device, challenge_id, signature}, signed with the user's "
                    + "identity key over a challenge from POST /v1/enrolment-challenges")
        }
        try Validation.deviceName(body.device.name)
        _ = try Validation.signingKey(body.device.signingPublicKey, field: "device.signing_public_key")
        // The challenge is spent by this call whatever the outcome: a signature works once.
        guard let challenge = try await identities.redeemEnrolmentChallenge(body.challengeID, userID: caller.userID) else {
            throw APIError.unprocessable("invalid_challenge", "unknown, expired or already used enrolment challenge")
        }
        let input = try DeviceEnrolment.signingInput(
            userID: caller.userID, challengeID: body.challengeID, nonce: challenge.nonce, device: body.device)
        guard let identityKey = try? Ed25519.PublicKey(rawRepresentation: [UInt8](challenge.identityKey)),
            identityKey.isValidSignature([UInt8](body.signature), for: input)
        else {
            throw APIError.unprocessable(
                "bad_signature", "the enrolment must be signed with the user's identity key over this challenge and device")
        }
        let device = try await identities.registerDevice(
            body.device, userID: caller.userID, caller: caller.deviceID, vouching: [caller.deviceID, challenge.deviceID])
        return EditedResponse(status: .created, response: device)
    }

    /// The user's devices, each with its last check-in per family member (`DeviceSyncState`).
    @Sendable func devices(_ request: Request, context: GrantRequestContext) async throws -> DeviceList {
        let userID = try context.requireIdentity().userID
        let states = try await syncStates.states(ofUser: userID)
        var devices = try await identities.devices(ofUser: userID)
        for index in devices.indices { devices[index].familyMembers = states[devices[index].deviceID] ?? [] }
        return DeviceList(devices: devices)
    }

    @Sendable func retireDevice(_ request: Request, context: GrantRequestContext) async throws -> HTTPResponse.Status {
        let caller = try context.requireIdentity()
        try await identities.retireDevice(try context.uuidParameter("deviceID"), by: caller.userID, from: caller.deviceID)
        return .noContent
    }

    /// A device stores the recovery key's certificate of its own key (`DeviceCertificate`).
    @Sendable func certify(_ request: Request, context: GrantRequestContext) async throws -> HTTPResponse.Status {
        let caller = try context.requireIdentity()
        guard try context.uuidParameter("deviceID") == caller.deviceID else {
            throw APIError.forbidden("a device stores only its own certificate, from itself")
        }
        try await identities.certify(try await request.decode(as: DeviceCertificate.self, context: context), for: caller)
        return .noContent
    }

    @Sendable func me(_ request: Request, context: GrantRequestContext) async throws -> MeResponse {
        let caller = try context.requireIdentity()
        guard let user = try await identities.user(caller.userID), let device = try await identities.device(caller.deviceID) else {
            throw APIError.unauthenticated
        }
        return MeResponse(user: user, device: device)
    }

    @Sendable func user(_ request: Request, context: GrantRequestContext) async throws -> UserResponse {
        _ = try context.requireIdentity()
        guard let user = try await identities.user(try context.parameters.require("userID", as: UUID.self)) else {
            throw APIError.notFound("user")
        }
        return user
    }

    @Sendable func challenge(_ request: Request, context: GrantRequestContext) async throws -> ChallengeResponse {
        let body = try await request.decode(as: ChallengeRequest.self, context: context)
        try Self.checkRenewal(of: body.deviceID, context: context)
        let (challenge, replaced) = try await identities.createChallenge(
            deviceID: body.deviceID, nonce: Data(SecureRandom.bytes(count: 32)), lifetime: lifetimes.challenge,
            openAtMost: limits.openChallengesPerDevice)
        if replaced > 0 { metrics.challengesReplaced.increment(by: Int64(replaced)) }
        return challenge
    }

    @Sendable func token(_ request: Request, context: GrantRequestContext) async throws -> TokenResponse {
        let body = try await request.decode(as: TokenRequest.self, context: context)
        try Self.checkRenewal(of: body.deviceID, context: context)
        // The challenge is spent by this call whatever the outcome: no second guess.
        guard let challenge = try await identities.redeemChallenge(body.challengeID, deviceID: body.deviceID),
            let key = try? Ed25519.PublicKey(rawRepresentation: [UInt8](challenge.signingKey)),
            key.isValidSignature(
                [UInt8](body.signature),
                for: DeviceAuthentication.signingInput(challengeID: body.challengeID, deviceID: body.deviceID, nonce: challenge.nonce))
        else {
            throw APIError(.unauthorized, "authentication_failed", "unknown, expired or used challenge, or a wrong signature")
        }
        let token = Base64URL.encode(SecureRandom.bytes(count: 32))
        let expiresAt = try await identities.storeToken(
            hash: BearerAuthenticator.hash(token: token), deviceID: body.deviceID, userID: challenge.userID,
            lifetime: lifetimes.token)
        return TokenResponse(token: token, expiresAt: expiresAt)
    }

    /// A renewal (a challenge or token request carrying a live token: `RenewalAuthenticator`)
    /// is only for the device its token names: one device's token buys no other device a place
    /// in its lane.
    static func checkRenewal(of deviceID: UUID, context: GrantRequestContext) throws {
        guard let caller = context.identity, caller.deviceID != deviceID else { return }
        throw APIError.forbidden("a token renews only its own device's; send this request without it")
    }
}

/// Input checks shared by the controllers; each failure is a 400 or 422 naming the field.
enum Validation {
    static func displayName(_ name: String) throws {
        guard (1...200).contains(name.count) else { throw APIError.badRequest("display_name must be 1–200 characters") }
    }

    static func deviceName(_ name: String) throws {
        guard (1...200).contains(name.count) else { throw APIError.badRequest("device name must be 1–200 characters") }
    }

    static func agreementKey(_ bytes: Data, field: String = "agreement_public_key") throws -> X25519.PublicKey {
        do {
            return try X25519.PublicKey(rawRepresentation: [UInt8](bytes))
        } catch {
            throw APIError.unprocessable("invalid_public_key", "\(field) must be a valid X25519 public key")
        }
    }

    static func signingKey(_ bytes: Data, field: String) throws -> Ed25519.PublicKey {
        do {
            return try Ed25519.PublicKey(rawRepresentation: [UInt8](bytes))
        } catch {
            throw APIError.unprocessable("invalid_public_key", "\(field) must be a 32-byte Ed25519 public key")
        }
    }

    /// `GrantRules.checkWrappedFMK`: the one 40-byte rule.
    static func wrappedKey(_ bytes: Data) throws {
        try GrantRules.checkWrappedFMK(bytes)
    }
}

/// URL-safe base64 without padding, for bearer tokens.
enum Base64URL {
    static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
