import Foundation
import RescindClient
import RescindCrypto
import RescindProtocol
import RescindTestSupport
import Testing

/// A user registers the public half of their recovery key with their identity, and only
/// whoever holds the key can register it.
@Suite(.serialized) struct RecoveryKeyRegistrationTests {
    static func request(
        _ keys: UserKeys, recovery: RecoveryKey?, signedBy signer: Ed25519.PrivateKey? = nil, recoveryPublicKey: Data? = nil
    ) throws -> RegisterUserRequest {
        var request = RegisterUserRequest(
            userID: keys.userID, displayName: "Adult A", agreementPublicKey: Data(keys.agreementKey.publicKey.rawRepresentation),
            identityPublicKey: Data(keys.identityKey.publicKey.rawRepresentation),
            device: RegisterDeviceRequest(deviceID: UUID(), name: "phone", signingPublicKey: Data(Ed25519.PrivateKey().publicKey.rawRepresentation)),
            recoveryPublicKey: recoveryPublicKey ?? recovery?.publicKey, signature: Data())
        let input = try request.signingInput()
        request.signature = Data(keys.identityKey.signature(for: input))
        if let key = signer ?? recovery?.signingKey { request.recoverySignature = Data(key.signature(for: input)) }
        return request
    }

    @Test func theRecoveryKeysPublicHalfIsRegisteredWithTheUser() async throws {
        try await GrantServiceHarness.with { service in
            let recovery = try RecoveryKey.generate()
            let owner = try await UserSession.register(
                keys: .generate(), displayName: "Adult A", deviceName: "phone", recoveryKey: recovery, baseURL: service.baseURL,
                tls: service.clientTLS)
            let other = try await UserSession.register(
                keys: .generate(), displayName: "Adult B", deviceName: "phone", baseURL: service.baseURL, tls: service.clientTLS)
            #expect(try await other.client.user(owner.keys.userID).recoveryPublicKey == recovery.publicKey)
            #expect(try await owner.client.me().user.recoveryPublicKey == recovery.publicKey)
            // A user without one shows none.
            #expect(try await owner.client.user(other.keys.userID).recoveryPublicKey == nil)
        }
    }

    @Test func aRecoveryKeyNotProvenIsRefusedAndNothingIsStored() async throws {
        try await GrantServiceHarness.with { service in
            let client = GrantServiceClient(baseURL: service.baseURL, tls: service.clientTLS)
            let recovery = try RecoveryKey.generate()
            let observer = try await service.user("Observer")
            var refusals: [(String, RegisterUserRequest)] = []
            var keys = UserKeys.generate()
            // Signed by someone else's key.
            refusals.append(("another key", try Self.request(keys, recovery: recovery, signedBy: Ed25519.PrivateKey())))
            // No signature at all.
            var unsigned = try Self.request(keys, recovery: recovery)
            unsigned.recoverySignature = nil
            refusals.append(("unsigned", unsigned))
            // The identity key registered as the recovery key too.
            keys = UserKeys.generate()
            refusals.append(
                ("the identity key", try Self.request(
                    keys, recovery: nil, signedBy: keys.identityKey, recoveryPublicKey: Data(keys.identityKey.publicKey.rawRepresentation))))
            // A signature without a key, and a key of the wrong length.
            var stray = try Self.request(UserKeys.generate(), recovery: nil)
            stray.recoverySignature = Data(repeating: 1, count: 64)
            refusals.append(("a stray signature", stray))
            refusals.append(("a short key", try Self.request(UserKeys.generate(), recovery: nil, signedBy: Ed25519.PrivateKey(), recoveryPublicKey: Data(count: 31))))
            for (_, request) in refusals {
                await expectFailure(422) { try await client.registerUser(request) }
                await expectFailure(404) { try await observer.client.user(request.userID) }
            }
        }
    }
}
