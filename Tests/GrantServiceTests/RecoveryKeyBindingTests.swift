import Foundation
import RescindCrypto
import RescindProtocol
import RescindTestSupport
import Testing

@testable import RescindClient

/// A client names its user's recovery key in a key statement only when its own identity key
/// bound it (`RecoveryKeyBinding`): the key a `create` or `adopt` names lets its holder hand the
/// family member over at once, so it must never be one the service chose. Adversaries: a
/// compromised grant service that swaps the registered recovery key for one it holds, and
/// requests carrying bindings made by other keys.
@Suite(.serialized) struct RecoveryKeyBindingTests {
    @Test func aRecoveryKeyTheServiceSwappedInIsNeverNamed() async throws {
        try await GrantServiceHarness.with { service in
            let owner = try await service.user("Adult A")
            let newOwner = try await service.user("Adult B")
            let words = try TestRecovery.key(for: owner.keys.userID)
            let (honest, _) = try await owner.createFamilyMember()
            #expect(try await Self.recoveryKey(namedBy: honest, seq: 1, through: owner) == words.publicKey)

            // The service moves first: a key it holds in place of the owner's, alone, then with a
            // binding by a key the service made, then with the binding another user's key made.
            let servicesOwn = try RecoveryKey.generate()
            let othersBinding = try RecoveryKeyBinding.sign(
                userID: newOwner.keys.userID, identityKey: newOwner.keys.identityKey, recoveryPublicKey: servicesOwn.publicKey)
            let forged = try RecoveryKeyBinding.sign(
                userID: owner.keys.userID, identityKey: Ed25519.PrivateKey(), recoveryPublicKey: servicesOwn.publicKey)
            let original = try await Self.binding(of: owner, in: service)
            for binding in [original, forged, othersBinding] {
                try await service.withConnection {
                    try await $0.execute(
                        """
                        UPDATE users SET recovery_public_key = \(servicesOwn.publicKey), recovery_binding = \(binding)
                        WHERE user_id = \(owner.keys.userID)
                        """)
                }
                #expect(try await owner.verifiedRecoveryPublicKey() == nil)
                let (swapped, _) = try await owner.createFamilyMember()
                #expect(try await Self.recoveryKey(namedBy: swapped, seq: 1, through: owner) == nil)
            }

            // The same for a new owner adopting: the service swaps Adult B's key before the adopt.
            try await service.withConnection {
                try await $0.execute(
                    """
                    UPDATE users SET recovery_public_key = \(words.publicKey), recovery_binding = \(original)
                    WHERE user_id = \(owner.keys.userID)
                    """)
            }
            try await owner.grant(honest, to: newOwner.keys.userID)
            try await owner.transferOwnershipAtOnce(honest, to: newOwner.keys.userID, recoveryKey: words)
            try await service.withConnection {
                try await $0.execute(
                    "UPDATE users SET recovery_public_key = \(servicesOwn.publicKey) WHERE user_id = \(newOwner.keys.userID)")
            }
            try await newOwner.adoptOwnership(honest)
            let adopt = try await newOwner.client.keyStatements(honest, after: 0).statements.last!.statement
            #expect(adopt.kind == .adopt && adopt.recoveryPublicKey == nil)
        }
    }

    @Test func theBindingFollowsARotationAndANewRecoveryKey() async throws {
        try await GrantServiceHarness.with { service in
            let owner = try await service.user("Adult A")
            let words = try TestRecovery.key(for: owner.keys.userID)
            let newKeys = UserKeys.generate(userID: owner.keys.userID)
            try await owner.rotateIdentityAtOnce(to: newKeys, currentGeneration: 1, recoveryKey: words)
            let rotated = owner.withKeys(newKeys)
            #expect(try await rotated.verifiedRecoveryPublicKey() == words.publicKey)
            #expect(try await owner.verifiedRecoveryPublicKey() == nil, "the old identity key's binding is gone with it")
            let (afterRotation, _) = try await rotated.createFamilyMember()
            #expect(try await Self.recoveryKey(namedBy: afterRotation, seq: 1, through: rotated) == words.publicKey)

            let newWords = try RecoveryKey.generate()
            let change = try await rotated.setRecoveryKey(newWords)
            let approved = try await words.order(.approve, for: owner.keys.userID, operationID: change.operationID, through: rotated.client)
            #expect(approved.operation?.state == .applied)
            #expect(try await rotated.verifiedRecoveryPublicKey() == newWords.publicKey)
            let (afterChange, _) = try await rotated.createFamilyMember()
            #expect(try await Self.recoveryKey(namedBy: afterChange, seq: 1, through: rotated) == newWords.publicKey)
        }
    }

    /// Bad bindings get a clear JSON error and change nothing stored.
    @Test func bindingsByOtherKeysAreRefused() async throws {
        try await GrantServiceHarness.with { service in
            let owner = try await service.user("Adult A")
            let anonymous = GrantServiceClient(baseURL: service.baseURL, tls: service.clientTLS)
            let keys = UserKeys.generate()
            let words = try TestRecovery.key(for: keys.userID)
            let device = RegisterDeviceRequest(
                deviceID: UUID(), name: "Adult C's phone", signingPublicKey: Data(Ed25519.PrivateKey().publicKey.rawRepresentation))
            func registration(binding: Data?, recoveryKey: RecoveryKey? = words) throws -> RegisterUserRequest {
                var request = try RegisterUserRequest.signed(keys: keys, displayName: "Adult C", device: device, recoveryKey: recoveryKey)
                request.recoveryBinding = binding
                let input = try request.signingInput()
                request.signature = Data(keys.identityKey.signature(for: input))
                request.recoverySignature = recoveryKey.map { Data($0.signingKey.signature(for: input)) }
                return request
            }
            let byAnotherKey = try RecoveryKeyBinding.sign(userID: keys.userID, identityKey: Ed25519.PrivateKey(), recoveryPublicKey: words.publicKey)
            let ofAnotherRecoveryKey = try RecoveryKeyBinding.sign(
                userID: keys.userID, identityKey: keys.identityKey, recoveryPublicKey: try RecoveryKey.generate().publicKey)
            let ofAnotherUser = try RecoveryKeyBinding.sign(userID: UUID(), identityKey: keys.identityKey, recoveryPublicKey: words.publicKey)
            for binding in [byAnotherKey, ofAnotherRecoveryKey, ofAnotherUser, Data(count: 64)] {
                await expectFailure(422, "bad_signature") { try await anonymous.registerUser(try registration(binding: binding)) }
            }
            await expectFailure(422, "invalid_field") {
                try await anonymous.registerUser(try registration(binding: byAnotherKey, recoveryKey: nil))
            }
            await expectFailure(404) { try await owner.client.user(keys.userID) }

            // A rotation or a new recovery key carrying a binding its key did not make.
            let newKeys = UserKeys.generate(userID: owner.keys.userID)
            let statement = IdentityRotationStatement(
                userID: owner.keys.userID, generation: 2, previousIdentityPublicKey: Data(owner.keys.identityKey.publicKey.rawRepresentation),
                identityPublicKey: Data(newKeys.identityKey.publicKey.rawRepresentation),
                agreementPublicKey: Data(newKeys.agreementKey.publicKey.rawRepresentation),
                issuedAt: Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down)))
            let input = try statement.signingInput()
            let ownerWords = try TestRecovery.key(for: owner.keys.userID)
            let byTheOldKey = try RecoveryKeyBinding.sign(
                userID: owner.keys.userID, identityKey: owner.keys.identityKey, recoveryPublicKey: ownerWords.publicKey)
            await expectFailure(422, "bad_signature") {
                try await owner.client.rotateIdentity(
                    IdentityRotation(
                        statement: statement, previousKeySignature: Data(owner.keys.identityKey.signature(for: input)),
                        newKeySignature: Data(newKeys.identityKey.signature(for: input)), recoveryBinding: byTheOldKey))
            }
            let newWords = try RecoveryKey.generate()
            let changeInput = try RecoveryKeyChange.signingInput(
                userID: owner.keys.userID, recoveryPublicKey: newWords.publicKey, previousRecoveryPublicKey: ownerWords.publicKey)
            await expectFailure(422, "bad_signature") {
                try await owner.client.setRecoveryKey(
                    RecoveryKeyChange(
                        userID: owner.keys.userID, recoveryPublicKey: newWords.publicKey, previousRecoveryPublicKey: ownerWords.publicKey,
                        signature: Data(newWords.signingKey.signature(for: changeInput)),
                        recoveryBinding: try RecoveryKeyBinding.sign(
                            userID: owner.keys.userID, identityKey: newKeys.identityKey, recoveryPublicKey: newWords.publicKey)))
            }
            #expect(try await owner.client.governedOperations().isEmpty)
            #expect(try await owner.verifiedRecoveryPublicKey() == ownerWords.publicKey)
        }
    }

    /// The recovery key the statement `seq` of `familyMemberID`'s history names, as served.
    static func recoveryKey(namedBy familyMemberID: UUID, seq: Int, through session: UserSession) async throws -> Data? {
        try await session.client.keyStatements(familyMemberID, after: seq - 1).statements.first!.statement.recoveryPublicKey
    }

    static func binding(of user: UserSession, in service: GrantServiceHarness) async throws -> Data {
        try await service.withConnection {
            try await $0.query("SELECT recovery_binding FROM users WHERE user_id = \(user.keys.userID)").first!.decode(Data.self, column: 0)
        }
    }
}
