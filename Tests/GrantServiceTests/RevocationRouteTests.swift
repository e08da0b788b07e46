import Foundation
import RescindClient
import RescindCrypto
import RescindProtocol
import RescindTestSupport
import Testing

/// Begin → upload → commit (or abandon), and the stolen-device variant: each route's
/// success and refusals. Every refusal leaves the family member as it was.
@Suite struct RevocationRouteTests {
    /// Version 1, C still active, no revocation recorded, no staging left behind by a refusal.
    static func expectUntouched(_ service: GrantServiceHarness, _ home: Household, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        #expect(try await home.adultA.client.fmkVersion(home.emma).currentFMKVersion == 1, sourceLocation: sourceLocation)
        #expect(try await home.adultC.client.wrappedKey(home.emma).fmkVersion == 1, sourceLocation: sourceLocation)
        #expect(try await service.count("SELECT count(*) FROM revocation_events") == 0, sourceLocation: sourceLocation)
        #expect(
            try await service.count("SELECT count(*) FROM records WHERE fmk_version <> 1") == 0, sourceLocation: sourceLocation)
    }

    @Test func begin() async throws {
        try await GrantServiceHarness.with { service in
            let home = try await Household.make(service, records: 3)
            let stranger = try await service.user("Stranger")
            let http = service.http
            let token = try await home.adultA.token()
            let path = "v1/family-members/\(home.emma)/revocations"
            func revoking(_ user: UUID, reason: String? = nil) -> BeginRevocationRequest {
                BeginRevocationRequest(revokedUserID: user, reason: reason)
            }

            let begun = try await http.send("POST", path, token: token, json: revoking(home.adultC.keys.userID, reason: "custody"))
            #expect(begun.status == 201)
            let revocation = try begun.decode(RevocationResponse.self)
            #expect(revocation.fromFMKVersion == 1 && revocation.newFMKVersion == 2)
            #expect(revocation.revokedUserID == home.adultC.keys.userID)
            #expect(Set(revocation.recordIDs) == Set(home.recordIDs))
            #expect(Set(revocation.remainingGrantees.map(\.userID)) == [home.adultA.keys.userID, home.adultB.keys.userID])
            #expect(revocation.expiresAt > Date())

            expectError(try await http.send("POST", path, token: token, json: revoking(home.adultA.keys.userID)), 422, "cannot_revoke_owner")
            expectError(try await http.send("POST", path, token: token, json: revoking(stranger.keys.userID)), 422, "not_a_grantee")
            expectError(
                try await http.send("POST", path, token: try await home.adultB.token(), json: revoking(home.adultC.keys.userID)),
                403, "forbidden")
            expectError(
                try await http.send("POST", path, token: try await stranger.token(), json: revoking(home.adultC.keys.userID)),
                403, "forbidden")
            expectError(
                try await http.send(
                    "POST", "v1/family-members/\(UUID())/revocations", token: token, json: revoking(home.adultC.keys.userID)),
                404, "not_found")
            expectError(
                try await http.send(
                    "POST", path, token: token,
                    json: revoking(home.adultC.keys.userID, reason: String(repeating: "r", count: 501))),
                400, "bad_request")
            // A NUL would stop at PostgreSQL (500), and its event would be refused downstream: refused here.
            expectError(
                try await http.send(
                    "POST", path, token: token, json: revoking(home.adultC.keys.userID, reason: "custody\u{0}change")),
                400, "bad_request")
            expectError(try await http.send("POST", path, token: token, text: "{}"), 400, "bad_request")
            expectError(try await http.send("POST", path, json: revoking(home.adultC.keys.userID)), 401, "unauthenticated")
            try await Self.expectUntouched(service, home)
        }
    }

    @Test func beginForEveryFamilyMember() async throws {
        try await GrantServiceHarness.with { service in
            let adultA = try await service.user("Adult A")
            let adultB = try await service.user("Adult B")
            let stranger = try await service.user("Stranger")
            let (emma, _) = try await adultA.createFamilyMember()
            let (liam, _) = try await adultA.createFamilyMember()
            _ = try await adultA.createFamilyMember()
            try await adultA.grant(emma, to: adultB.keys.userID)
            try await adultA.grant(liam, to: adultB.keys.userID)
            let http = service.http
            let token = try await adultA.token()
            let request = BeginUserRevocationRequest(reason: "device stolen")

            let begun = try await http.send("POST", "v1/users/\(adultB.keys.userID)/revocations", token: token, json: request)
            #expect(begun.status == 201)
            let revocations = try begun.decode(RevocationList.self).revocations
            #expect(Set(revocations.map(\.familyMemberID)) == [emma, liam])
            #expect(revocations.allSatisfy { $0.revokedUserID == adultB.keys.userID })

            expectError(try await http.send("POST", "v1/users/\(UUID())/revocations", token: token, json: request), 404, "not_found")
            expectError(
                try await http.send("POST", "v1/users/\(stranger.keys.userID)/revocations", token: token, json: request), 422,
                "not_a_grantee")
            // B owns nothing A can read, so B can revoke A from nothing.
            expectError(
                try await http.send(
                    "POST", "v1/users/\(adultA.keys.userID)/revocations", token: try await adultB.token(), json: request),
                422, "not_a_grantee")
            expectError(
                try await http.send(
                    "POST", "v1/users/\(adultB.keys.userID)/revocations", token: token,
                    json: BeginUserRevocationRequest(reason: String(repeating: "r", count: 501))),
                400, "bad_request")
            expectError(try await http.send("POST", "v1/users/b/revocations", token: token, json: request), 400, "bad_request")
            expectError(try await http.send("POST", "v1/users/\(adultB.keys.userID)/revocations", json: request), 401, "unauthenticated")
        }
    }

    /// Adult A begins revoking Adult C from Emma and re-encrypts her records: what the upload tests send.
    static func uploadTarget(
        _ home: Household
    ) async throws -> (revocation: RevocationResponse, records: [StagedRecord], token: String, path: String) {
        let revocation = try await home.adultA.client.beginRevocation(
            home.emma, BeginRevocationRequest(revokedUserID: home.adultC.keys.userID))
        let (records, _, _) = try await home.adultA.reencrypt(revocation)
        return (revocation, records, try await home.adultA.token(), "v1/revocations/\(revocation.revocationID)/records")
    }

    /// Upload batches in the binary record form: the same rules as JSON, checked the same way.
    @Test func uploadBinaryBatches() async throws {
        try await GrantServiceHarness.with { service in
            let home = try await Household.make(service, records: 3)
            let (revocation, records, token, path) = try await Self.uploadTarget(home)
            let http = service.http
            func send(_ body: Data) async throws -> RawHTTP.Answer {
                try await http.send("PUT", path, token: token, body: body, contentType: BinaryRecords.mediaType)
            }
            func binary(_ records: [StagedRecord]) -> Data { BinaryRecords.encode(UploadBatchRequest(records: records)) }

            let first = try await send(binary(Array(records.prefix(2))))
            #expect(first.status == 200)
            #expect(try first.decode(UploadBatchResponse.self) == UploadBatchResponse(staged: 2, totalStaged: 2, totalExpected: 3))
            let again = try await send(binary(records))
            #expect(try again.decode(UploadBatchResponse.self) == UploadBatchResponse(staged: 3, totalStaged: 3, totalExpected: 3))

            let whole = binary(records)
            expectError(try await send(whole.prefix(whole.count - 1)), 400, "bad_request")
            expectError(try await send(whole + [0]), 400, "bad_request")
            expectError(try await send(Data("not records".utf8)), 400, "bad_request")
            expectError(try await send(binary([records[0], records[0]])), 422, "duplicate_record")
            // Binary bytes labelled as JSON are malformed JSON.
            expectError(try await http.send("PUT", path, token: token, body: whole), 400, "bad_request")
            let unknown = StagedRecord(
                recordID: UUID(), sourceChangeSeq: 1, nonce: records[0].nonce, ciphertext: records[0].ciphertext,
                tag: records[0].tag)
            expectError(try await send(binary([records[1], unknown])), 422, "unknown_records")
            // A refused batch changes nothing: the counts still say 3 of 3.
            let last = try await home.adultA.client.uploadRevocationBatch(revocation.revocationID, [records[2]])
            #expect(last == UploadBatchResponse(staged: 1, totalStaged: 3, totalExpected: 3))
        }
    }

    @Test func uploadBatches() async throws {
        try await GrantServiceHarness.with { service in
            let home = try await Household.make(service, records: 3)
            let (liam, liamFMK) = try await home.adultA.createFamilyMember()
            let liamRecord = try await home.adultA.putRecord(liam, plaintext: Array("liam".utf8), fmk: liamFMK, version: 1)
            let (revocation, records, token, path) = try await Self.uploadTarget(home)
            let http = service.http
            func batch(_ records: [StagedRecord]) -> UploadBatchRequest { UploadBatchRequest(records: records) }

            let first = try await http.send("PUT", path, token: token, json: batch(Array(records.prefix(2))))
            #expect(first.status == 200)
            #expect(try first.decode(UploadBatchResponse.self) == UploadBatchResponse(staged: 2, totalStaged: 2, totalExpected: 3))
            // Idempotent per record: a retried batch replaces, it does not add.
            let again = try await home.adultA.client.uploadRevocationBatch(revocation.revocationID, Array(records.suffix(2)))
            #expect(again == UploadBatchResponse(staged: 2, totalStaged: 3, totalExpected: 3))

            expectError(try await http.send("PUT", path, token: token, json: batch([records[0], records[0]])), 422, "duplicate_record")
            var badNonce = records[0]
            badNonce.nonce = Data(count: 8)
            expectError(try await http.send("PUT", path, token: token, json: batch([badNonce])), 400, "bad_request")
            let unknown = StagedRecord(
                recordID: UUID(), sourceChangeSeq: 1, nonce: records[0].nonce, ciphertext: records[0].ciphertext,
                tag: records[0].tag)
            expectError(try await http.send("PUT", path, token: token, json: batch([records[1], unknown])), 422, "unknown_records")
            let liams = StagedRecord(
                recordID: liamRecord, sourceChangeSeq: 1, nonce: records[0].nonce, ciphertext: records[0].ciphertext,
                tag: records[0].tag)
            expectError(try await http.send("PUT", path, token: token, json: batch([liams])), 422, "unknown_records")
            let tooMany = (0...5000).map { _ in unknown }
            expectError(try await http.send("PUT", path, token: token, json: batch(tooMany)), 413, "payload_too_large")
            expectError(try await http.send("PUT", path, token: try await home.adultB.token(), json: batch(records)), 403, "forbidden")
            expectError(try await http.send("PUT", "v1/revocations/\(UUID())/records", token: token, json: batch(records)), 404, "not_found")
            expectError(try await http.send("PUT", "v1/revocations/x/records", token: token, json: batch(records)), 400, "bad_request")
            expectError(try await http.send("PUT", path, json: batch(records)), 401, "unauthenticated")
            // The refused batches staged nothing.
            #expect(try await service.count("SELECT count(*) FROM staged_records") == 3)
            try await Self.expectUntouched(service, home)
        }
    }

    @Test func commitRefusesAnythingButTheWholeRevocation() async throws {
        try await GrantServiceHarness.with { service in
            let home = try await Household.make(service, records: 3)
            let a = home.adultA
            let revocation = try await a.client.beginRevocation(home.emma, BeginRevocationRequest(revokedUserID: home.adultC.keys.userID))
            let (records, grants, _) = try await a.reencrypt(revocation)
            let http = service.http
            let token = try await a.token()
            let path = "v1/revocations/\(revocation.revocationID)/commit"
            let valid = CommitRevocationRequest(newFMKVersion: 2, grants: grants)
            func commit(_ request: CommitRevocationRequest) async throws -> RawHTTP.Answer {
                try await http.send("POST", path, token: token, json: request)
            }

            // 422: a record not re-encrypted yet.
            _ = try await a.client.uploadRevocationBatch(revocation.revocationID, Array(records.prefix(2)))
            expectError(try await commit(valid), 422, "records_missing")
            _ = try await a.client.uploadRevocationBatch(revocation.revocationID, Array(records.suffix(1)))

            // 422: the new FMK wrapped for the revoked user, a remaining grantee left out or
            // named twice, a wrong version, a malformed key, someone else's "self" copy.
            let wrapped = Data(SecureRandom.bytes(count: 40))
            let cGrant = NewGrant(granteeUserID: home.adultC.keys.userID, wrapping: .ecdh, wrappedFMK: wrapped)
            expectError(try await commit(CommitRevocationRequest(newFMKVersion: 2, grants: grants + [cGrant])), 422, "grant_for_revoked_user")
            expectError(try await commit(CommitRevocationRequest(newFMKVersion: 2, grants: Array(grants.dropLast()))), 422, "grants_mismatch")
            expectError(try await commit(CommitRevocationRequest(newFMKVersion: 2, grants: grants + grants.prefix(1))), 422, "grants_mismatch")
            let stranger = NewGrant(granteeUserID: UUID(), wrapping: .ecdh, wrappedFMK: wrapped)
            expectError(try await commit(CommitRevocationRequest(newFMKVersion: 2, grants: grants + [stranger])), 422, "grants_mismatch")
            expectError(try await commit(CommitRevocationRequest(newFMKVersion: 3, grants: grants)), 422, "invalid_version")
            let short = grants.map { NewGrant(granteeUserID: $0.granteeUserID, wrapping: $0.wrapping, wrappedFMK: Data(count: 32)) }
            expectError(try await commit(CommitRevocationRequest(newFMKVersion: 2, grants: short)), 422, "invalid_wrapped_key")
            let selfForB = grants.map {
                $0.granteeUserID == home.adultB.keys.userID ? NewGrant(granteeUserID: $0.granteeUserID, wrapping: .self, wrappedFMK: $0.wrappedFMK) : $0
            }
            expectError(try await commit(CommitRevocationRequest(newFMKVersion: 2, grants: selfForB)), 422, "invalid_wrapping")
            // 403, 404, 400, 401.
            expectError(try await http.send("POST", path, token: try await home.adultB.token(), json: valid), 403, "forbidden")
            expectError(try await http.send("POST", "v1/revocations/\(UUID())/commit", token: token, json: valid), 404, "not_found")
            expectError(try await http.send("POST", path, token: token, text: #"{"grants":[]}"#), 400, "bad_request")
            expectError(try await http.send("POST", path, json: valid), 401, "unauthenticated")
            try await Self.expectUntouched(service, home)

            // 409: another revocation of Emma, begun at version 1, commits first.
            let other = try await a.client.beginRevocation(home.emma, BeginRevocationRequest(revokedUserID: home.adultB.keys.userID))
            let (otherCommit, _) = try await a.stage(other)
            _ = try await a.client.commitRevocation(other.revocationID, otherCommit)
            expectError(try await commit(valid), 409, "version_conflict")
            #expect(try await a.client.fmkVersion(home.emma).currentFMKVersion == 2)
            #expect(try await home.adultC.client.wrappedKey(home.emma).fmkVersion == 2)
        }
    }

    @Test func commitThenCommitAgain() async throws {
        try await GrantServiceHarness.with { service in
            let home = try await Household.make(service, records: 2)
            let revocation = try await home.adultA.client.beginRevocation(
                home.emma, BeginRevocationRequest(revokedUserID: home.adultC.keys.userID, reason: "custody change"))
            let (commit, newFMK) = try await home.adultA.stage(revocation)
            let answer = try await service.http.send(
                "POST", "v1/revocations/\(revocation.revocationID)/commit", token: try await home.adultA.token(), json: commit)
            #expect(answer.status == 200)
            let committed = try answer.decode(RevocationCommitted.self)
            #expect(committed.newFMKVersion == 2 && committed.recordsReencrypted == 2 && committed.devicesNotified == 3)
            #expect(try await home.adultB.currentFMK(home.emma).fmk == newFMK)
            // The staging is gone with the commit.
            await expectFailure(404, "not_found") { try await home.adultA.client.commitRevocation(revocation.revocationID, commit) }
            #expect(try await service.count("SELECT count(*) FROM revocation_stagings") == 0)
            #expect(try await service.count("SELECT count(*) FROM staged_records") == 0)
            let event = try await service.withConnection { connection in
                try await connection.query(
                    "SELECT event_id, new_fmk_version, records_reencrypted, reason FROM revocation_events"
                ).first!.decode(UUID.self, Int.self, Int.self, String?.self)
            }
            #expect(event == (committed.eventID, 2, 2, "custody change"))
        }
    }

    @Test func abandon() async throws {
        try await GrantServiceHarness.with { service in
            let home = try await Household.make(service, records: 2)
            let revocation = try await home.adultA.client.beginRevocation(
                home.emma, BeginRevocationRequest(revokedUserID: home.adultC.keys.userID))
            let (commit, _) = try await home.adultA.stage(revocation)
            let http = service.http
            let token = try await home.adultA.token()
            let path = "v1/revocations/\(revocation.revocationID)"

            expectError(try await http.send("DELETE", path, token: try await home.adultB.token()), 403, "forbidden")
            expectError(try await http.send("DELETE", "v1/revocations/\(UUID())", token: token), 404, "not_found")
            expectError(try await http.send("DELETE", "v1/revocations/nope", token: token), 400, "bad_request")
            expectError(try await http.send("DELETE", path), 401, "unauthenticated")
            #expect(try await http.send("DELETE", path, token: token).status == 204)

            expectError(try await http.send("DELETE", path, token: token), 404, "not_found")
            await expectFailure(404, "not_found") { try await home.adultA.client.commitRevocation(revocation.revocationID, commit) }
            await expectFailure(404, "not_found") { try await home.adultA.client.uploadRevocationBatch(revocation.revocationID, []) }
            #expect(try await service.count("SELECT count(*) FROM staged_records") == 0)
            try await Self.expectUntouched(service, home)
        }
    }
}
