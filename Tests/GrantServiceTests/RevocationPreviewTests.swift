import Foundation
import RescindClient
import RescindProtocol
import RescindTestSupport
import Testing

/// `GET /v1/family-members/{id}/revocation-preview?user=U`: what a revocation would do, read by
/// the owner before anything changes, and the same devices the commit then commands.
@Suite struct RevocationPreviewTests {
    @Test func theOwnerSeesWhoLosesAccessTheRecordsAndTheDevicesTheCommitCommands() async throws {
        try await GrantServiceHarness.with { service in
            let home = try await Household.make(service, records: 3)
            let (adultA, adultB, adultC, emma) = (home.adultA, home.adultB, home.adultC, home.emma)
            // Each user's first device (the harness's "phone") is an agent; C also has an iPad (agent),
            // a CLI (interactive: holds nothing, never commanded) and a retired tablet.
            let adultCiPad = try await adultC.addDevice(name: "Adult C's iPad", kind: .tablet)
            _ = try await adultC.addDevice(name: "Adult C's rescind CLI", role: .interactive)
            let adultCTablet = try await adultC.addDevice(name: "Adult C's old tablet", kind: .tablet)
            try await adultC.client.retireDevice(adultCTablet.deviceID)
            _ = try await adultB.addDevice(name: "Adult B's rescind CLI", role: .interactive)
            // A user with no access to Emma: their devices are nobody's business here.
            let stranger = try await service.user("Stranger")

            let preview = try await adultA.client.revocationPreview(emma, user: adultC.keys.userID)
            #expect(preview.familyMemberID == emma)
            #expect(preview.revokedUserID == adultC.keys.userID)
            #expect(preview.revokedUserDisplayName == "Adult C")
            #expect(preview.recordCount == 3)
            let actions = Dictionary(uniqueKeysWithValues: preview.devices.map { ($0.deviceID, $0.action) })
            #expect(actions == [
                adultA.deviceID: .fmkRotation, adultB.deviceID: .fmkRotation,
                adultC.deviceID: .secureDeletion, adultCiPad.deviceID: .secureDeletion,
            ])
            let iPad = try #require(preview.devices.first { $0.deviceID == adultCiPad.deviceID })
            #expect(iPad.name == "Adult C's iPad" && iPad.userID == adultC.keys.userID && iPad.userDisplayName == "Adult C")
            #expect(preview.devices.first { $0.deviceID == adultB.deviceID }?.userDisplayName == "Adult B")

            // Read-only: nothing begun, nothing changed, C still reads and writes.
            #expect(try await service.count("SELECT count(*) FROM revocation_stagings") == 0)
            #expect(try await service.count("SELECT count(*) FROM revocation_events") == 0)
            #expect(try await adultC.client.wrappedKey(emma).fmkVersion == 1)
            _ = try await adultC.putRecord(emma, plaintext: Array("C still writes".utf8), fmk: home.fmk, version: 1)

            // Refusals: only the owner, only a grantee, never the owner themself.
            let http = service.http
            let path = "v1/family-members/\(emma)/revocation-preview"
            let query = "user=\(adultC.keys.userID.uuidString.lowercased())"
            expectError(try await http.send("GET", path, query: query, token: try await adultB.token()), 403, "forbidden")
            expectError(try await http.send("GET", path, query: query, token: try await adultC.token()), 403, "forbidden")
            expectError(try await http.send("GET", path, query: query, token: try await stranger.token()), 403, "forbidden")
            expectError(
                try await http.send("GET", "v1/family-members/\(UUID())/revocation-preview", query: query, token: try await adultA.token()),
                404, "not_found")
            let tokenA = try await adultA.token()
            expectError(
                try await http.send("GET", path, query: "user=\(stranger.keys.userID.uuidString.lowercased())", token: tokenA),
                422, "not_a_grantee")
            expectError(
                try await http.send("GET", path, query: "user=\(adultA.keys.userID.uuidString.lowercased())", token: tokenA),
                422, "cannot_revoke_owner")
            expectError(try await http.send("GET", path, token: tokenA), 400, "bad_request")
            expectError(try await http.send("GET", path, query: "user=not-a-uuid", token: tokenA), 400, "bad_request")
            expectError(try await http.send("GET", path, query: query), 401, "unauthenticated")

            // The commit commands exactly the devices the preview named (one more record now: C wrote one).
            let committed = try await adultA.revoke(emma, user: adultC.keys.userID, reason: "custody change")
            #expect(committed.devicesNotified == preview.devices.count)
            let events = try await service.messages(.revocationEvents, count: 1)
            let event = try SignedMessage<RevocationEvent>.verified(
                from: try #require(events.first?.value), schema: RevocationEvent.schema, key: service.serviceKey
            ).payload
            #expect(Dictionary(uniqueKeysWithValues: event.expectedDevices.map { ($0.deviceID, $0.action) }) == actions)
            #expect(event.expectedDevices.map(\.userID) == preview.devices.map(\.userID))

            // Once revoked, there is nothing left to preview.
            expectError(try await http.send("GET", path, query: query, token: tokenA), 422, "not_a_grantee")
        }
    }
}
