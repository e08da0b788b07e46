import Foundation
import RescindClient
import RescindCrypto
import RescindProtocol
import RescindTestSupport
import Testing

/// Encrypted records and the incremental-sync feed.
@Suite struct RecordRouteTests {
    @Test func putGetAndDelete() async throws {
        try await GrantServiceHarness.with { service in
            let home = try await Household.make(service, records: 0)
            let stranger = try await service.user("Stranger")
            let (liam, liamFMK) = try await home.adultA.createFamilyMember()
            let http = service.http
            let token = try await home.adultB.token()
            let recordID = UUID()
            let path = "v1/family-members/\(home.emma)/records/\(recordID)"
            let sealed = try RecordCipher.seal(Array("allergy: penicillin".utf8), recordID: recordID, version: 1, fmk: home.fmk)

            // Any active grantee writes; everyone with access reads the same ciphertext.
            let stored = try await http.send("PUT", path, token: token, json: sealed)
            #expect(stored.status == 200)
            let first = try stored.decode(RecordResponse.self)
            #expect(first.ciphertext == sealed.ciphertext && first.fmkVersion == 1)
            let replacement = try RecordCipher.seal(Array("allergy: none".utf8), recordID: recordID, version: 1, fmk: home.fmk)
            let replaced = try await home.adultB.client.putRecord(home.emma, recordID, replacement)
            #expect(replaced.changeSeq > first.changeSeq)
            let read = try await home.adultA.client.record(home.emma, recordID)
            #expect(try RecordCipher.open(read, fmk: home.fmk) == Array("allergy: none".utf8))

            // 400: malformed AES-GCM parts or ids.
            var badNonce = sealed
            badNonce.nonce = Data(count: 11)
            expectError(try await http.send("PUT", path, token: token, json: badNonce), 400, "bad_request")
            var badTag = sealed
            badTag.tag = Data(count: 15)
            expectError(try await http.send("PUT", path, token: token, json: badTag), 400, "bad_request")
            expectError(try await http.send("PUT", path, token: token, text: "[1]"), 400, "bad_request")
            let badID = "v1/family-members/\(home.emma)/records/r1"
            expectError(try await http.send("PUT", badID, token: token, json: sealed), 400, "bad_request")
            expectError(try await http.send("GET", badID, token: token), 400, "bad_request")
            expectError(try await http.send("DELETE", badID, token: token), 400, "bad_request")
            // 409: a stale version, or a record id that belongs to another family member.
            var future = sealed
            future.fmkVersion = 2
            expectError(try await http.send("PUT", path, token: token, json: future), 409, "version_conflict")
            let liamRecord = try RecordCipher.seal(Array("x".utf8), recordID: recordID, version: 1, fmk: liamFMK)
            await expectFailure(409, "record_id_taken") {
                try await home.adultA.client.putRecord(liam, recordID, liamRecord)
            }
            // 413: over the 1 MiB body limit.
            var huge = sealed
            huge.ciphertext = Data(count: 1 << 20)
            expectError(try await http.send("PUT", path, token: token, json: huge), 413, "payload_too_large")
            // 403, 404, 401.
            let strangerToken = try await stranger.token()
            expectError(try await http.send("PUT", path, token: strangerToken, json: sealed), 403, "forbidden")
            expectError(try await http.send("GET", path, token: strangerToken), 403, "forbidden")
            expectError(try await http.send("DELETE", path, token: strangerToken), 403, "forbidden")
            let nowhere = "v1/family-members/\(UUID())/records/\(recordID)"
            expectError(try await http.send("PUT", nowhere, token: token, json: sealed), 404, "not_found")
            expectError(try await http.send("GET", nowhere, token: token), 404, "not_found")
            expectError(
                try await http.send("GET", "v1/family-members/\(home.emma)/records/\(UUID())", token: token), 404, "not_found")
            expectError(try await http.send("PUT", path, json: sealed), 401, "unauthenticated")
            expectError(try await http.send("GET", path), 401, "unauthenticated")
            expectError(try await http.send("DELETE", path), 401, "unauthenticated")

            // Delete leaves a tombstone; a second delete finds nothing.
            #expect(try await http.send("DELETE", path, token: token).status == 204)
            expectError(try await http.send("GET", path, token: token), 404, "not_found")
            expectError(try await http.send("DELETE", path, token: token), 404, "not_found")
            let feed = try await home.adultA.client.changes(home.emma, since: 0)
            #expect(feed.records.isEmpty && feed.deletedRecordIDs == [recordID])

            // A revoked grantee can neither read nor write.
            _ = try await home.adultA.revoke(home.emma, user: home.adultC.keys.userID)
            let revoked = try await home.adultC.token()
            expectError(try await http.send("PUT", path, token: revoked, json: sealed), 403, "access_revoked")
            expectError(try await http.send("GET", path, token: revoked), 403, "access_revoked")
            // Writing under the old version after the rotation is a conflict.
            expectError(try await http.send("PUT", path, token: token, json: sealed), 409, "version_conflict")
        }
    }

    @Test func changeFeedPaginatesInChangeOrder() async throws {
        try await GrantServiceHarness.with { service in
            let home = try await Household.make(service, records: 5)
            let stranger = try await service.user("Stranger")
            let http = service.http
            let token = try await home.adultB.token()
            let feed = "v1/family-members/\(home.emma)/records"

            // Change the first record and delete the second: both move to the end of the feed.
            _ = try await home.adultA.putRecord(
                home.emma, recordID: home.recordIDs[0], plaintext: Array("edited".utf8), fmk: home.fmk, version: 1)
            try await home.adultA.client.deleteRecord(home.emma, home.recordIDs[1])

            var cursor: Int64 = 0
            var pages: [RecordPage] = []
            repeat {
                let page = try await home.adultB.client.changes(home.emma, since: cursor, limit: 2)
                #expect(page.nextCursor > cursor)
                #expect(page.records.count + page.deletedRecordIDs.count == 2 || !page.hasMore)
                #expect(page.currentFMKVersion == 1)
                cursor = page.nextCursor
                pages.append(page)
            } while pages.last!.hasMore
            #expect(pages.count == 3)
            let seen = pages.flatMap { $0.records.map(\.recordID) }
            #expect(seen == Array(home.recordIDs[2...]) + [home.recordIDs[0]])
            #expect(pages.flatMap(\.deletedRecordIDs) == [home.recordIDs[1]])
            #expect(pages.flatMap(\.records).map(\.changeSeq) == pages.flatMap(\.records).map(\.changeSeq).sorted())
            // Nothing after the last cursor.
            let empty = try await home.adultB.client.changes(home.emma, since: cursor)
            #expect(empty.records.isEmpty && empty.deletedRecordIDs.isEmpty && !empty.hasMore && empty.nextCursor == cursor)

            for query in ["since=-1", "since=abc", "limit=0", "limit=1001", "limit=ten"] {
                expectError(try await http.send("GET", feed, query: query, token: token), 400, "bad_request")
            }
            expectError(try await http.send("GET", feed, token: try await stranger.token()), 403, "forbidden")
            expectError(try await http.send("GET", "v1/family-members/\(UUID())/records", token: token), 404, "not_found")
            expectError(try await http.send("GET", feed), 401, "unauthenticated")
        }
    }

    /// The change feed answers JSON by default and the binary record form to clients that ask for it;
    /// both carry the same page.
    @Test func changeFeedInBothForms() async throws {
        try await GrantServiceHarness.with { service in
            let home = try await Household.make(service, records: 4)
            try await home.adultA.client.deleteRecord(home.emma, home.recordIDs[1])
            let http = service.http
            let token = try await home.adultB.token()
            let feed = "v1/family-members/\(home.emma)/records"

            let json = try await http.send("GET", feed, query: "since=0&limit=10", token: token)
            #expect(json.status == 200 && json.contentType == "application/json")
            let jsonPage = try json.decode(RecordPage.self)
            #expect(jsonPage.records.count == 3 && jsonPage.deletedRecordIDs == [home.recordIDs[1]])

            let binary = try await http.send(
                "GET", feed, query: "since=0&limit=10", token: token, accept: BinaryRecords.mediaType)
            #expect(binary.status == 200 && binary.contentType == BinaryRecords.mediaType)
            #expect(try BinaryRecords.decodePage(binary.body, familyMemberID: home.emma) == jsonPage)
            #expect(binary.body.count < json.body.count)
            // The client asks for the binary form.
            #expect(try await home.adultB.client.changes(home.emma, since: 0, limit: 10) == jsonPage)
            // Errors stay JSON whatever was asked for.
            expectError(
                try await http.send("GET", feed, query: "limit=0", token: token, accept: BinaryRecords.mediaType),
                400, "bad_request")
        }
    }
}
