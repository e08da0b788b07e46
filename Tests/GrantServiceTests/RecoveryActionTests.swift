import Foundation
import RescindCrypto
import RescindPostgres
import RescindProtocol
import RescindTestSupport
import Testing

@testable import GrantService
@testable import RescindClient

/// The thief acts first with a copy of the owner's unlocked phone (keystore, what opens it, a
/// live token) and retires every other device of the owner, which shuts the owner out. The
/// recovery key, kept on paper, stands for the owner at once: it enrols a new device, restores
/// the one the thief retired and retires the phone. Nothing signed without it changes anything.
@Suite(.serialized) struct RecoveryActionTests {
    struct Owner {
        let recovery: RecoveryKey
        let phone: UserSession
        let iPad: UserSession
        let emma: UUID
    }

    static func owner(on service: GrantServiceHarness) async throws -> Owner {
        let recovery = try RecoveryKey.generate()
        let phone = try await UserSession.register(
            keys: .generate(), displayName: "Adult A", deviceName: "Adult A's iPhone", recoveryKey: recovery,
            baseURL: service.baseURL, tls: service.clientTLS)
        let iPad = try await phone.addDevice(name: "Adult A's iPad")
        let (emma, fmk) = try await phone.createFamilyMember()
        _ = try await phone.putRecord(emma, plaintext: Array("allergy: penicillin".utf8), fmk: fmk, version: 1)
        return Owner(recovery: recovery, phone: phone, iPad: iPad, emma: emma)
    }

    static func anonymous(_ service: GrantServiceHarness) -> GrantServiceClient {
        GrantServiceClient(baseURL: service.baseURL, tls: service.clientTLS)
    }

    @Test func theThiefRetiresEveryOtherDeviceAndTheRecoveryKeyTakesThemBack() async throws {
        try await GrantServiceHarness.with { service in
            let owner = try await Self.owner(on: service)
            let thief = owner.phone  // the copy: the same keys, device key and token
            try await thief.client.retireDevice(owner.iPad.deviceID)
            await expectFailure(401, "device_retired") { try await owner.iPad.client.me() }

            // On a new laptop, with the recovery words alone: enrol it, restore the iPad, retire the phone.
            let laptopKey = Ed25519.PrivateKey()
            let laptop = RegisterDeviceRequest(
                deviceID: UUID(), name: "Adult A's new laptop", kind: .laptop, role: .interactive,
                signingPublicKey: Data(laptopKey.publicKey.rawRepresentation))
            let client = Self.anonymous(service)
            let enrolled = try await owner.recovery.order(.enrol, for: owner.phone.keys.userID, device: laptop, through: client)
            #expect(enrolled == RecoveryActionResult(kind: .enrol, deviceID: laptop.deviceID))
            try await owner.recovery.order(.restore, for: owner.phone.keys.userID, deviceID: owner.iPad.deviceID, through: client)
            try await owner.recovery.order(.retire, for: owner.phone.keys.userID, deviceID: thief.deviceID, through: client)

            // The laptop authenticates with its own key; the iPad is back; the phone is shut out.
            let laptopClient = GrantServiceClient(
                baseURL: service.baseURL, credentials: .init(deviceID: laptop.deviceID, signingKey: laptopKey), tls: service.clientTLS)
            #expect(try await laptopClient.me().user.userID == owner.phone.keys.userID)
            #expect(try await owner.iPad.readRecords(owner.emma).count == 1)
            await expectFailure(401, "device_retired") { try await thief.client.me() }
            await expectFailure(401, "device_retired") { try await thief.client.retireDevice(owner.iPad.deviceID) }
            // From the iPad, the owner goes on as after any stolen device: the phone cannot touch it.
            let devices = try await owner.iPad.client.devices()
            #expect(devices.first { $0.deviceID == thief.deviceID }?.retiredAt != nil)
            #expect(devices.first { $0.deviceID == owner.iPad.deviceID }?.retiredAt == nil)
        }
    }

    @Test func ordersTheRecoveryKeyDidNotSignChangeNothing() async throws {
        try await GrantServiceHarness.with { service in
            let owner = try await Self.owner(on: service)
            let other = try await Self.owner(on: service)
            let client = Self.anonymous(service)
            let userID = owner.phone.keys.userID
            func signed(_ action: RecoveryAction, nonce: Data, by key: Ed25519.PrivateKey) throws -> SignedRecoveryAction {
                SignedRecoveryAction(action: action, signature: Data(key.signature(for: try action.signingInput(nonce: nonce))))
            }
            let retireIPad = { (challenge: ChallengeResponse) in
                RecoveryAction(userID: userID, challengeID: challenge.challengeID, kind: .retire, deviceID: owner.iPad.deviceID)
            }
            // The thief's keys: identity key and device key sign nothing the service takes as the recovery key's.
            for key in [owner.phone.keys.identityKey, Ed25519.PrivateKey(), other.recovery.signingKey] {
                let challenge = try await client.recoveryChallenge(for: userID)
                await expectFailure(422, "bad_signature") {
                    try await client.recoveryAction(try signed(retireIPad(challenge), nonce: challenge.nonce, by: key))
                }
                // The challenge was spent by the refused attempt: the right key cannot use it either.
                await expectFailure(422, "invalid_challenge") {
                    try await client.recoveryAction(try signed(retireIPad(challenge), nonce: challenge.nonce, by: owner.recovery.signingKey))
                }
            }
            // Another user's challenge, a signature over another nonce, a device of another user.
            let theirs = try await client.recoveryChallenge(for: other.phone.keys.userID)
            await expectFailure(422, "invalid_challenge") {
                try await client.recoveryAction(try signed(retireIPad(theirs), nonce: theirs.nonce, by: owner.recovery.signingKey))
            }
            let mine = try await client.recoveryChallenge(for: userID)
            await expectFailure(422, "bad_signature") {
                try await client.recoveryAction(try signed(retireIPad(mine), nonce: Data(count: 32), by: owner.recovery.signingKey))
            }
            await expectFailure(404) {
                try await owner.recovery.order(.retire, for: userID, deviceID: other.iPad.deviceID, through: client)
            }
            await expectFailure(422, "invalid_field") {
                try await owner.recovery.order(.enrol, for: userID, deviceID: owner.iPad.deviceID, through: client)
            }
            // A user without a recovery key has none to order with.
            let plain = try await UserSession.register(
                keys: .generate(), displayName: "Adult B", deviceName: "Adult B's phone", baseURL: service.baseURL, tls: service.clientTLS)
            await expectFailure(404) { try await client.recoveryChallenge(for: plain.keys.userID) }
            // Every device is as it was.
            _ = try await owner.iPad.client.me()
            _ = try await other.iPad.client.me()
            #expect(try await owner.phone.client.devices().allSatisfy { $0.retiredAt == nil })
        }
    }

    /// Anyone may ask for a challenge, so a user has only five open at a time.
    @Test func anAnonymousCallerCannotPileUpChallenges() async throws {
        try await GrantServiceHarness.with { service in
            let owner = try await Self.owner(on: service)
            let client = Self.anonymous(service)
            for _ in 0..<RecoveryStore.liveChallengesPerUser {
                _ = try await client.recoveryChallenge(for: owner.phone.keys.userID)
            }
            await expectFailure(429, "too_many_challenges") { try await client.recoveryChallenge(for: owner.phone.keys.userID) }
            let open = try await service.withConnection { connection in
                try await connection.query("SELECT count(*) FROM recovery_challenges").first!.decode(Int.self, column: 0)
            }
            #expect(open == RecoveryStore.liveChallengesPerUser)
            // Expired ones make room again.
            try await service.withConnection { connection in
                try await connection.execute("UPDATE recovery_challenges SET expires_at = now() - interval '1 second'")
            }
            _ = try await client.recoveryChallenge(for: owner.phone.keys.userID)
        }
    }
}
