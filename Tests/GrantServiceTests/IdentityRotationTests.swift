import Foundation
import RescindCrypto
import RescindProtocol
import RescindTestSupport
import Testing

@testable import RescindClient

/// Identity-key rotation, and the thief who copied a user's keys from a stolen phone.
@Suite(.serialized) struct IdentityRotationTests {
    /// Rotates B's keys from B's tablet (approved with B's recovery key) and moves B's copies to the new keys.
    static func rotate(_ session: UserSession) async throws -> UserSession {
        let newKeys = UserKeys.generate(userID: session.keys.userID)
        let me = try await session.client.me()
        let operation = try await session.rotateIdentityAtOnce(to: newKeys, currentGeneration: me.user.identityGeneration)
        #expect(operation.state == .applied && operation.decidedBy == .recoveryKey)
        #expect(try await session.client.user(session.keys.userID).identityGeneration == me.user.identityGeneration + 1)
        let rotated = session.withKeys(newKeys)
        try await rotated.rewrapHeldKeys(from: session.keys)
        return rotated
    }

    @Test func aRotationMovesEveryCopyToTheNewKeysAndLeavesAVerifiableChain() async throws {
        try await GrantServiceHarness.with { service in
            let home = try await Household.make(service, records: 2)
            let (liam, _) = try await home.adultB.createFamilyMember()  // B owns one too: a self copy
            let old = home.adultB
            let before = try await old.readRecords(home.emma)

            let rotated = try await Self.rotate(old)
            let served = try await home.adultA.client.user(old.keys.userID)
            #expect(served.identityGeneration == 2)
            #expect(served.agreementPublicKey == Data(rotated.keys.agreementKey.publicKey.rawRepresentation))
            #expect(served.identityPublicKey == Data(rotated.keys.identityKey.publicKey.rawRepresentation))
            // Every copy opens with the new keys and with none of the old ones.
            #expect(try await rotated.readRecords(home.emma) == before)
            _ = try await rotated.currentFMK(liam)
            let moved = try await rotated.client.wrappedKey(home.emma)
            #expect(throws: (any Error).self) { try old.unwrap(moved) }
            // Running the re-wrap again finds nothing left to move (crash recovery is a no-op when done).
            let again = try await rotated.rewrapHeldKeys(from: old.keys)
            #expect(again.rewrapped == 0 && again.current == 2)

            // The chain: one statement, signed by the old key and by the new one.
            let chain = try await home.adultA.client.identityRotations(of: old.keys.userID)
            try #require(chain.count == 1)
            let input = try chain[0].statement.signingInput()
            #expect(old.keys.identityKey.publicKey.isValidSignature([UInt8](chain[0].previousKeySignature), for: input))
            #expect(rotated.keys.identityKey.publicKey.isValidSignature([UInt8](chain[0].newKeySignature), for: input))
        }
    }

    /// The thief copied B's keys (all three) and a live token from B's phone. B retires
    /// nothing yet — the worst case — and rotates from the tablet; A revokes B everywhere and
    /// re-grants. Nothing the thief holds opens anything issued after that.
    @Test func theThiefWithTheOldKeysGetsNothingNew() async throws {
        try await GrantServiceHarness.with { service in
            let home = try await Household.make(service, records: 3)
            let phone = home.adultB
            let tablet = try await phone.addDevice(name: "Adult B's iPad")
            let thiefKeys = phone.keys
            let staleB = try await home.adultA.client.user(phone.keys.userID)  // A's cached view of B
            let (oldFMK, _) = try await phone.currentFMK(home.emma)

            let rotated = try await Self.rotate(tablet)
            // A's client, still holding B's old key, wraps to it: refused, nothing granted.
            let (liam, _) = try await home.adultA.createFamilyMember()
            let (liamFMK, liamVersion) = try await home.adultA.currentFMK(liam)
            let toOldKey = try FMKWrapping.wrap(
                liamFMK, familyMemberID: liam, version: UInt32(liamVersion), granter: home.adultA.keys.agreementKey,
                grantee: try X25519.PublicKey(rawRepresentation: [UInt8](staleB.agreementPublicKey)))
            await expectFailure(409, "stale_identity_key") {
                try await home.adultA.client.grant(
                    liam,
                    GrantRequest(
                        granteeUserID: phone.keys.userID, fmkVersion: liamVersion, wrappedFMK: Data(toOldKey),
                        granteeAgreementPublicKey: staleB.agreementPublicKey))
            }
            #expect(try await home.adultA.client.grants(liam).count == 1)

            // Revoke B everywhere, then re-grant B at the new version: wrapped to B's new key, once
            // A compared codes with B (a rotation signed by the old key alone is what a thief makes).
            for revocation in try await home.adultA.client.beginUserRevocation(phone.keys.userID, BeginUserRevocationRequest()) {
                _ = try await home.adultA.complete(revocation, uploadBatchSize: 500, progress: { _ in })
            }
            await #expect(throws: KeyHistoryError.self) { try await home.adultA.grant(home.emma, to: phone.keys.userID) }
            try home.adultA.pins.pin(
                phone.keys.userID,
                .init(
                    identityPublicKey: Data(rotated.keys.identityKey.publicKey.rawRepresentation),
                    agreementPublicKey: Data(rotated.keys.agreementKey.publicKey.rawRepresentation), source: .comparedCode))
            try await home.adultA.grant(home.emma, to: phone.keys.userID)
            let regranted = try await rotated.client.wrappedKey(home.emma)
            #expect(regranted.fmkVersion == 2)
            #expect(throws: (any Error).self) { try phone.withKeys(thiefKeys).unwrap(regranted) }
            let newFMK = try rotated.unwrap(regranted)
            #expect(newFMK != oldFMK)
            // The records re-encrypted by the revocation do not open with the FMK the thief had.
            for record in try await rotated.allRecords(home.emma) {
                #expect(throws: (any Error).self) { try RecordCipher.open(record, fmk: oldFMK) }
                _ = try RecordCipher.open(record, fmk: newFMK)
            }
            // The thief cannot rotate B's identity to keys of their own with the old key, even holding a live token.
            let thiefChoice = UserKeys.generate(userID: phone.keys.userID)
            await expectFailure(409, "stale_rotation") {
                try await phone.withKeys(thiefKeys).registerRotation(to: thiefChoice, currentGeneration: 2)
            }
            await expectFailure(409, "stale_rotation") {
                try await phone.withKeys(thiefKeys).registerRotation(to: thiefChoice, currentGeneration: 1)
            }
            #expect(try await home.adultA.client.user(phone.keys.userID).identityGeneration == 2)
        }
    }

    /// Bad rotations get a clear JSON error and change nothing.
    @Test func badRotationsAreRefused() async throws {
        try await GrantServiceHarness.with { service in
            let b = try await service.user("Adult B")
            let c = try await service.user("Adult C")
            let http = service.http
            let token = try await b.token()
            let newKeys = UserKeys.generate(userID: b.keys.userID)
            func rotation(
                _ statement: IdentityRotationStatement, signedBy previous: Ed25519.PrivateKey, and next: Ed25519.PrivateKey
            ) throws -> IdentityRotation {
                let input = try statement.signingInput()
                return IdentityRotation(
                    statement: statement, previousKeySignature: Data(previous.signature(for: input)),
                    newKeySignature: Data(next.signature(for: input)))
            }
            func statement(
                user: UUID? = nil, generation: Int = 2, previous: Ed25519.PrivateKey? = nil, to keys: UserKeys? = nil,
                at date: Date = Date()
            ) -> IdentityRotationStatement {
                let keys = keys ?? newKeys
                return IdentityRotationStatement(
                    userID: user ?? b.keys.userID, generation: generation,
                    previousIdentityPublicKey: Data((previous ?? b.keys.identityKey).publicKey.rawRepresentation),
                    identityPublicKey: Data(keys.identityKey.publicKey.rawRepresentation),
                    agreementPublicKey: Data(keys.agreementKey.publicKey.rawRepresentation),
                    issuedAt: Date(timeIntervalSince1970: (date.timeIntervalSince1970 * 1000).rounded(.down) / 1000))
            }
            let path = "v1/identity-rotations"
            let good = statement()
            // Signed by a key that is not B's identity key (claiming it is, or not).
            expectError(
                try await http.send("POST", path, token: token, json: try rotation(good, signedBy: c.keys.identityKey, and: newKeys.identityKey)),
                422, "bad_signature")
            expectError(
                try await http.send(
                    "POST", path, token: token,
                    json: try rotation(statement(previous: c.keys.identityKey), signedBy: c.keys.identityKey, and: newKeys.identityKey)),
                409, "stale_rotation")
            // The new key did not sign.
            expectError(
                try await http.send("POST", path, token: token, json: try rotation(good, signedBy: b.keys.identityKey, and: c.keys.identityKey)),
                422, "bad_signature")
            // Another user's identity, an old statement, a skipped generation.
            expectError(
                try await http.send(
                    "POST", path, token: try await c.token(), json: try rotation(good, signedBy: b.keys.identityKey, and: newKeys.identityKey)),
                403, "forbidden")
            expectError(
                try await http.send(
                    "POST", path, token: token,
                    json: try rotation(statement(at: Date().addingTimeInterval(-3600)), signedBy: b.keys.identityKey, and: newKeys.identityKey)),
                422, "stale_statement")
            expectError(
                try await http.send(
                    "POST", path, token: token, json: try rotation(statement(generation: 3), signedBy: b.keys.identityKey, and: newKeys.identityKey)),
                409, "stale_rotation")
            // C's keys are taken.
            expectError(
                try await http.send(
                    "POST", path, token: token, json: try rotation(statement(to: c.keys), signedBy: b.keys.identityKey, and: c.keys.identityKey)),
                409, "key_reused")
            expectError(try await http.send("POST", path, token: token, text: #"{"statement":{}}"#), 400, "bad_request")
            expectError(try await http.send("POST", path, json: try rotation(good, signedBy: b.keys.identityKey, and: newKeys.identityKey)), 401)
            #expect(try await b.client.me().user.identityGeneration == 1, "nothing changed")

            // The good one is received once (pending: a second one waits); approved with B's recovery
            // key it takes effect, and replayed it is stale; rotating back to the stolen keys is refused.
            let accepted = try rotation(good, signedBy: b.keys.identityKey, and: newKeys.identityKey)
            let received = try await http.send("POST", path, token: token, json: accepted)
            #expect(received.status == 202)
            expectError(try await http.send("POST", path, token: token, json: accepted), 409, "operation_pending")
            let pending = try #require(try await b.client.governedOperations().first)
            #expect(pending.state == .pending && pending.rotation == accepted)
            await expectFailure(422, "bad_signature") {  // the words sign the rotation statement too
                try await TestRecovery.key(for: b.keys.userID).order(.approve, for: b.keys.userID, operationID: pending.operationID, through: b.client)
            }
            try await TestRecovery.key(for: b.keys.userID).approve(pending, through: b.client)
            expectError(try await http.send("POST", path, token: token, json: accepted), 409, "stale_rotation")
            let back = statement(generation: 3, previous: newKeys.identityKey, to: b.keys)
            expectError(
                try await http.send("POST", path, token: token, json: try rotation(back, signedBy: newKeys.identityKey, and: b.keys.identityKey)),
                409, "key_reused")
            #expect(try await b.client.identityRotations(of: b.keys.userID).count == 1)
            expectError(try await http.send("GET", "v1/users/\(UUID())/identity-rotations", token: token), 404, "not_found")
        }
    }

    /// A grantee who rotates while a revocation runs: the owner's client re-wraps for the new key
    /// and commits (the stale wrap is refused, never stored).
    @Test func aRevocationRewrapsForAGranteeWhoRotatedMeanwhile() async throws {
        try await GrantServiceHarness.with { service in
            let home = try await Household.make(service, records: 2)
            let revocation = try await home.adultA.client.beginRevocation(
                home.emma, BeginRevocationRequest(revokedUserID: home.adultC.keys.userID))
            let rotated = try await Self.rotate(home.adultB)
            let committed = try await home.adultA.complete(revocation, uploadBatchSize: 500, progress: { _ in })
            #expect(committed.newFMKVersion == 2)
            #expect(try await rotated.readRecords(home.emma).count == 2)
        }
    }
}
