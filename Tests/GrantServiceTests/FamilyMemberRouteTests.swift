import Foundation
import RescindClient
import RescindCrypto
import RescindProtocol
import RescindTestSupport
import Testing

/// Family members, their wrapped keys, grants and ownership.
@Suite struct FamilyMemberRouteTests {
    static let someWrappedKey = Data(SecureRandom.bytes(count: 40))

    @Test func createAndList() async throws {
        try await GrantServiceHarness.with { service in
            let adultA = try await service.user("Adult A")
            let adultB = try await service.user("Adult B")
            let http = service.http
            let token = try await adultA.token()
            let id = UUID()
            var statement = KeyStatement(
                familyMemberID: id, seq: 1, kind: .create, fmkVersion: 1, previousHash: nil, ownerUserID: adultA.keys.userID,
                signerIdentityKey: Data(adultA.keys.identityKey.publicKey.rawRepresentation),
                holders: [
                    KeyStatement.Holder(
                        userID: adultA.keys.userID, wrapping: .self,
                        agreementKeyFingerprint: KeyStatement.fingerprint(
                            ofAgreementKey: Data(adultA.keys.agreementKey.publicKey.rawRepresentation)),
                        wrappedFMKHash: KeyStatement.wrappedHash(Self.someWrappedKey))
                ],
                fmkCommitment: Data(repeating: 1, count: 32), issuedAt: Date())
            let request = CreateFamilyMemberRequest(
                familyMemberID: id, wrappedFMK: Self.someWrappedKey,
                statement: try SignedKeyStatement(signing: statement, with: adultA.keys.identityKey))

            // Without the owner's statement, with one signed by another key, or one naming another copy: refused.
            var unsigned = request
            unsigned.statement = nil
            expectError(try await http.send("POST", "v1/family-members", token: token, json: unsigned), 422, "key_statement_required")
            var forged = request
            forged.statement?.signature = Data(repeating: 0, count: 64)
            expectError(try await http.send("POST", "v1/family-members", token: token, json: forged), 422, "invalid_key_statement")
            statement.holders[0].wrappedFMKHash = Data(repeating: 2, count: 32)
            var otherCopy = request
            otherCopy.statement = try SignedKeyStatement(signing: statement, with: adultA.keys.identityKey)
            expectError(try await http.send("POST", "v1/family-members", token: token, json: otherCopy), 422, "invalid_key_statement")
            #expect(try await adultA.client.familyMembers() == [])

            let created = try await http.send("POST", "v1/family-members", token: token, json: request)
            #expect(created.status == 201)
            let emma = try created.decode(FamilyMemberResponse.self)
            #expect(emma.familyMemberID == request.familyMemberID)
            #expect(emma.ownerUserID == adultA.keys.userID && emma.currentFMKVersion == 1)

            expectError(try await http.send("POST", "v1/family-members", token: token, json: request), 409, "already_exists")
            expectError(
                try await http.send("POST", "v1/family-members", token: try await adultB.token(), json: request), 409,
                "already_exists")
            let shortKey = CreateFamilyMemberRequest(familyMemberID: UUID(), wrappedFMK: Data(count: 39))
            expectError(
                try await http.send("POST", "v1/family-members", token: token, json: shortKey), 422, "invalid_wrapped_key")
            expectError(try await http.send("POST", "v1/family-members", token: token, text: "null"), 400, "bad_request")
            expectError(try await http.send("POST", "v1/family-members", json: request), 401, "unauthenticated")

            #expect(try await adultA.client.familyMembers() == [emma])
            #expect(try await adultB.client.familyMembers() == [])
            expectError(try await http.send("GET", "v1/family-members"), 401, "unauthenticated")
        }
    }

    @Test func readFamilyMemberVersionAndKey() async throws {
        try await GrantServiceHarness.with { service in
            let home = try await Household.make(service, records: 1)
            let stranger = try await service.user("Stranger")
            let http = service.http
            let strangerToken = try await stranger.token()
            let ownerToken = try await home.adultA.token()

            #expect(try await home.adultB.client.familyMember(home.emma).ownerUserID == home.adultA.keys.userID)
            #expect(try await home.adultB.client.fmkVersion(home.emma).currentFMKVersion == 1)
            #expect(try await home.adultB.client.familyMembers().map(\.familyMemberID) == [home.emma])
            let ownerCopy = try await home.adultA.client.wrappedKey(home.emma)
            #expect(ownerCopy.wrapping == .self && ownerCopy.granterAgreementPublicKey == nil)
            let granteeCopy = try await home.adultB.client.wrappedKey(home.emma)
            #expect(granteeCopy.wrapping == .ecdh && granteeCopy.grantedByUserID == home.adultA.keys.userID)
            #expect(granteeCopy.granterAgreementPublicKey == Data(home.adultA.keys.agreementKey.publicKey.rawRepresentation))
            #expect(try home.adultB.unwrap(granteeCopy) == home.fmk)

            for suffix in ["", "/fmk-version", "/key"] {
                let path = "v1/family-members/\(home.emma)\(suffix)"
                expectError(try await http.send("GET", path, token: strangerToken), 403, "forbidden")
                expectError(try await http.send("GET", path), 401, "unauthenticated")
                expectError(try await http.send("GET", "v1/family-members/\(UUID())\(suffix)", token: ownerToken), 404, "not_found")
                expectError(try await http.send("GET", "v1/family-members/emma\(suffix)", token: ownerToken), 400, "bad_request")
            }

            _ = try await home.adultA.revoke(home.emma, user: home.adultC.keys.userID)
            let revokedToken = try await home.adultC.token()
            for suffix in ["", "/fmk-version", "/key"] {
                expectError(
                    try await http.send("GET", "v1/family-members/\(home.emma)\(suffix)", token: revokedToken), 403,
                    "access_revoked")
            }
            #expect(try await home.adultC.client.familyMembers() == [])
        }
    }

    @Test func replaceKey() async throws {
        try await GrantServiceHarness.with { service in
            let home = try await Household.make(service, records: 0)
            let stranger = try await service.user("Stranger")
            let http = service.http
            let token = try await home.adultB.token()
            let path = "v1/family-members/\(home.emma)/key"
            let ownerKey = Data(home.adultA.keys.agreementKey.publicKey.rawRepresentation)

            // B re-stores the copy they were given; A re-wraps theirs under the master key.
            let current = try await home.adultB.client.wrappedKey(home.emma)
            let same = ReplaceKeyRequest(
                fmkVersion: 1, wrapping: .ecdh, wrappedFMK: current.wrappedFMK, granterAgreementPublicKey: ownerKey)
            var unchanged = current
            unchanged.keyStatements = nil
            #expect(try await home.adultB.client.replaceKey(home.emma, same) == unchanged)
            try await home.adultA.adoptOwnership(home.emma)
            #expect(try await home.adultA.currentFMK(home.emma).version == 1)

            var stale = same
            stale.fmkVersion = 2
            expectError(try await http.send("PUT", path, token: token, json: stale), 409, "version_conflict")
            let selfWithKey = ReplaceKeyRequest(
                fmkVersion: 1, wrapping: .self, wrappedFMK: Self.someWrappedKey, granterAgreementPublicKey: ownerKey)
            expectError(try await http.send("PUT", path, token: token, json: selfWithKey), 422, "invalid_wrapping")
            let ecdhWithoutKey = ReplaceKeyRequest(fmkVersion: 1, wrapping: .ecdh, wrappedFMK: Self.someWrappedKey)
            expectError(try await http.send("PUT", path, token: token, json: ecdhWithoutKey), 422, "invalid_wrapping")
            let shortKey = ReplaceKeyRequest(
                fmkVersion: 1, wrapping: .ecdh, wrappedFMK: Data(count: 16), granterAgreementPublicKey: ownerKey)
            expectError(try await http.send("PUT", path, token: token, json: shortKey), 422, "invalid_wrapped_key")
            expectError(try await http.send("PUT", path, token: try await stranger.token(), json: same), 403, "forbidden")
            expectError(
                try await http.send("PUT", "v1/family-members/\(UUID())/key", token: token, json: same), 404, "not_found")
            expectError(try await http.send("PUT", path, token: token, text: #"{"fmk_version":"1"}"#), 400, "bad_request")
            expectError(try await http.send("PUT", path, json: same), 401, "unauthenticated")
            // B's copy is untouched by the refused attempts.
            #expect(try await home.adultB.client.wrappedKey(home.emma).wrappedFMK == current.wrappedFMK)
        }
    }

    @Test func grantAndListGrants() async throws {
        try await GrantServiceHarness.with { service in
            let adultA = try await service.user("Adult A")
            let adultB = try await service.user("Adult B")
            let adultD = try await service.user("Adult D")
            let (emma, _) = try await adultA.createFamilyMember()
            let http = service.http
            let token = try await adultA.token()
            let path = "v1/family-members/\(emma)/grants"

            try await adultA.grant(emma, to: adultB.keys.userID)
            let grants = try await adultA.client.grants(emma)
            #expect(grants.map(\.granteeUserID) == [adultA.keys.userID, adultB.keys.userID])
            #expect(grants.map(\.wrapping) == [.self, .ecdh])
            #expect(grants.allSatisfy { $0.fmkVersion == 1 && $0.revokedAt == nil })

            let adultE = try await service.user("Adult E")
            let agreementKeys = Dictionary(uniqueKeysWithValues: [adultA, adultB, adultD, adultE].map {
                ($0.keys.userID, Data($0.keys.agreementKey.publicKey.rawRepresentation))
            })
            func request(_ grantee: UUID, version: Int = 1, key: Data = Self.someWrappedKey, wrappedTo: Data? = nil) -> GrantRequest {
                GrantRequest(
                    granteeUserID: grantee, fmkVersion: version, wrappedFMK: key,
                    granteeAgreementPublicKey: wrappedTo ?? agreementKeys[grantee] ?? Data(repeating: 9, count: 32))
            }
            // Wrapped to a key that is not the grantee's current one: refused, nothing granted.
            expectError(
                try await http.send("POST", path, token: token, json: request(adultE.keys.userID, wrappedTo: agreementKeys[adultD.keys.userID])),
                409, "stale_identity_key")
            // Without the owner's signed statement: refused, nothing granted.
            expectError(try await http.send("POST", path, token: token, json: request(adultD.keys.userID)), 422, "key_statement_required")
            try await adultA.grant(emma, to: adultD.keys.userID)
            #expect(try await adultA.client.grants(emma).last?.granteeUserID == adultD.keys.userID)

            expectError(try await http.send("POST", path, token: token, json: request(adultB.keys.userID)), 409, "already_granted")
            expectError(
                try await http.send("POST", path, token: token, json: request(UUID(), version: 2)), 409, "version_conflict")
            expectError(try await http.send("POST", path, token: token, json: request(adultA.keys.userID)), 422, "grant_to_self")
            expectError(
                try await http.send("POST", path, token: token, json: request(UUID(), key: Data(count: 41))), 422,
                "invalid_wrapped_key")
            expectError(try await http.send("POST", path, token: token, json: request(UUID())), 404, "not_found")
            expectError(
                try await http.send("POST", "v1/family-members/\(UUID())/grants", token: token, json: request(UUID())), 404,
                "not_found")
            let grantee = try await adultB.token()
            expectError(try await http.send("POST", path, token: grantee, json: request(UUID())), 403, "forbidden")
            expectError(try await http.send("POST", path, token: token, text: "{}"), 400, "bad_request")
            expectError(try await http.send("POST", path, json: request(UUID())), 401, "unauthenticated")

            expectError(try await http.send("GET", path, token: grantee), 403, "forbidden")
            expectError(try await http.send("GET", "v1/family-members/\(UUID())/grants", token: token), 404, "not_found")
            expectError(try await http.send("GET", "v1/family-members/emma/grants", token: token), 400, "bad_request")
            expectError(try await http.send("GET", path), 401, "unauthenticated")
            #expect(try await adultA.client.grants(emma).count == 3)
        }
    }

    @Test func transferOwnership() async throws {
        try await GrantServiceHarness.with { service in
            let home = try await Household.make(service, records: 0)
            let stranger = try await service.user("Stranger")
            let http = service.http
            let token = try await home.adultA.token()
            let path = "v1/family-members/\(home.emma)/ownership"
            func to(_ user: UUID) -> TransferOwnershipRequest { TransferOwnershipRequest(newOwnerUserID: user) }

            expectError(try await http.send("POST", path, token: token, json: to(stranger.keys.userID)), 422, "not_a_grantee")
            expectError(try await http.send("POST", path, token: token, json: to(home.adultA.keys.userID)), 422, "already_owner")
            expectError(
                try await http.send("POST", path, token: try await home.adultC.token(), json: to(home.adultC.keys.userID)),
                403, "forbidden")
            expectError(
                try await http.send("POST", "v1/family-members/\(UUID())/ownership", token: token, json: to(home.adultB.keys.userID)),
                404, "not_found")
            expectError(try await http.send("POST", path, token: token, text: "{"), 400, "bad_request")
            expectError(try await http.send("POST", path, json: to(home.adultB.keys.userID)), 401, "unauthenticated")

            expectError(try await http.send("POST", path, token: token, json: to(home.adultB.keys.userID)), 422, "key_statement_required")
            // Received as a governed operation (pending); approved with A's recovery key, it takes effect.
            let transferred = try await home.adultA.transferOwnership(home.emma, to: home.adultB.keys.userID)
            #expect(transferred.state == .pending && transferred.transfer?.newOwnerUserID == home.adultB.keys.userID)
            #expect(try await home.adultA.client.familyMember(home.emma).ownerUserID == home.adultA.keys.userID)
            await expectFailure(409, "operation_pending") { try await home.adultA.transferOwnership(home.emma, to: home.adultB.keys.userID) }
            let approved = try await TestRecovery.key(for: home.adultA.keys.userID).order(
                .approve, for: home.adultA.keys.userID, operationID: transferred.operationID, transfer: transferred.transfer?.statement,
                through: home.adultA.client)
            #expect(approved.operation?.state == .applied)
            #expect(try await home.adultA.client.familyMember(home.emma).ownerUserID == home.adultB.keys.userID)
            // A kept access but is no longer the owner.
            #expect(try await home.adultA.client.fmkVersion(home.emma).currentFMKVersion == 1)
            expectError(try await http.send("POST", path, token: token, json: to(home.adultC.keys.userID)), 403, "forbidden")
        }
    }
}
