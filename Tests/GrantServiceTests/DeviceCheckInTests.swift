import Foundation
import RescindClient
import RescindProtocol
import RescindTestSupport
import Testing

/// Each device's last check-in per family member (`device_sync_state`, `GET /v1/devices`): the
/// FMK version of the last key it fetched and the furthest change-feed position it was given.
@Suite struct DeviceCheckInTests {
    /// The check-ins `session`'s device shows in its own user's device list.
    static func checkIns(of session: UserSession) async throws -> [DeviceSyncState] {
        let device = try #require(try await session.client.devices().first { $0.deviceID == session.deviceID })
        return try #require(device.familyMembers)
    }

    /// Pages the change feed from `cursor` to its end, `limit` changes a page; answers the last cursor.
    static func page(_ session: UserSession, _ familyMemberID: UUID, from cursor: Int64 = 0, limit: Int) async throws -> Int64 {
        var cursor = cursor
        while true {
            let page = try await session.client.changes(familyMemberID, since: cursor, limit: limit)
            cursor = page.nextCursor
            if !page.hasMore { return cursor }
        }
    }

    /// The row's transaction id: it changes only when the row is written.
    static func rowVersion(_ service: GrantServiceHarness, device: UUID, familyMember: UUID) async throws -> String {
        try await service.withConnection { connection in
            try await connection.query(
                """
                SELECT xmin::text FROM device_sync_state WHERE device_id = \(device) AND family_member_id = \(familyMember)
                """
            ).first!.decode(String.self, column: 0)
        }
    }

    static func lastChange(_ service: GrantServiceHarness, of familyMember: UUID) async throws -> Int64 {
        try await service.withConnection { connection in
            try await connection.query(
                "SELECT max(change_seq) FROM records WHERE family_member_id = \(familyMember)"
            ).first!.decode(Int64.self, column: 0)
        }
    }

    @Test(.timeLimit(.minutes(3)))
    func keyAndFeedFetchesAreRecordedAndARefusedFetchIsNot() async throws {
        try await GrantServiceHarness.with { service in
            let home = try await Household.make(service, records: 5)
            // Nothing fetched yet: B's device lists no family member.
            #expect(try await Self.checkIns(of: home.adultB) == [])

            // B's device fetches the key, then pages the whole feed two changes at a time.
            #expect(try await home.adultB.client.wrappedKey(home.emma).fmkVersion == 1)
            let afterKey = try #require(try await Self.checkIns(of: home.adultB).first)
            #expect(afterKey.familyMemberID == home.emma && afterKey.fmkVersion == 1 && afterKey.changeSeq == nil)
            let cursor = try await Self.page(home.adultB, home.emma, limit: 2)
            let end = try await Self.lastChange(service, of: home.emma)
            #expect(cursor == end)
            let synced = try await Self.checkIns(of: home.adultB)
            #expect(synced.map(\.familyMemberID) == [home.emma] && synced[0].fmkVersion == 1 && synced[0].changeSeq == end)
            #expect(abs(synced[0].fetchedAt.timeIntervalSinceNow) < 60)

            // Nothing moved: the same key, an empty page, a page from the start again: the row is not written.
            let written = try await Self.rowVersion(service, device: home.adultB.deviceID, familyMember: home.emma)
            _ = try await home.adultB.client.wrappedKey(home.emma)
            _ = try await home.adultB.client.changes(home.emma, since: cursor, limit: 2)
            _ = try await home.adultB.client.changes(home.emma, since: 0, limit: 2)
            #expect(try await Self.rowVersion(service, device: home.adultB.deviceID, familyMember: home.emma) == written)
            #expect(try await Self.checkIns(of: home.adultB) == synced, "a page from the start moved the position back")

            // C's device syncs too, and B's second device never does.
            let bTablet = try await home.adultB.addDevice(name: "Adult B's tablet", kind: .tablet)
            _ = try await home.adultC.readRecords(home.emma)
            let cBefore = try await Self.checkIns(of: home.adultC)
            #expect(cBefore.count == 1 && cBefore[0].fmkVersion == 1 && cBefore[0].changeSeq == end)
            let cWritten = try await Self.rowVersion(service, device: home.adultC.deviceID, familyMember: home.emma)

            // A revokes C: every record re-encrypted under v2 with new change sequences.
            _ = try await home.adultA.revoke(home.emma, user: home.adultC.keys.userID, reason: "custody change")
            let endV2 = try await Self.lastChange(service, of: home.emma)
            #expect(endV2 > end)

            // B's device rotates: the v2 key, then the feed from where it was.
            #expect(try await home.adultB.client.wrappedKey(home.emma).fmkVersion == 2)
            #expect(try await Self.checkIns(of: home.adultB).first?.fmkVersion == 2)
            #expect(try await Self.page(home.adultB, home.emma, from: cursor, limit: 2) == endV2)
            let rotated = try await Self.checkIns(of: home.adultB)
            #expect(rotated.count == 1 && rotated[0].fmkVersion == 2 && rotated[0].changeSeq == endV2)

            // C's refused fetches (403) advance nothing: C's device still shows v1 at the old position.
            await expectFailure(403, "access_revoked") { try await home.adultC.client.wrappedKey(home.emma) }
            await expectFailure(403, "access_revoked") { try await home.adultC.client.changes(home.emma, since: end, limit: 2) }
            await expectFailure(403, "access_revoked") { try await home.adultC.client.changes(home.emma, since: 0, limit: 2) }
            #expect(try await Self.checkIns(of: home.adultC) == cBefore)
            #expect(try await Self.rowVersion(service, device: home.adultC.deviceID, familyMember: home.emma) == cWritten)

            // The list shows every device of the user, each with its own check-ins.
            let bDevices = try await home.adultB.client.devices()
            #expect(bDevices.map(\.deviceID) == [home.adultB.deviceID, bTablet.deviceID])
            #expect(bDevices.map { $0.familyMembers?.count } == [1, 0])
            #expect(try await service.count("SELECT count(*) FROM device_sync_state WHERE device_id = \(bTablet.deviceID)") == 0)
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func aFeedReadBeforeAnyKeyFetchIsEnteredAtTheCiphertextVersion() async throws {
        try await GrantServiceHarness.with { service in
            let home = try await Household.make(service, records: 3)
            let page = try await home.adultB.client.changes(home.emma, since: 0, limit: 1)
            let states = try await Self.checkIns(of: home.adultB)
            #expect(states.count == 1 && states[0].fmkVersion == 1 && states[0].changeSeq == page.nextCursor)
            // A page with no change moves no position and enters none.
            let liam = try await home.adultA.createFamilyMember().familyMemberID
            let empty = try await home.adultA.client.changes(liam, since: 0, limit: 10)
            #expect(empty.records.isEmpty && empty.deletedRecordIDs.isEmpty)
            let liamState = try #require(try await Self.checkIns(of: home.adultA).first { $0.familyMemberID == liam })
            #expect(liamState.fmkVersion == 1 && liamState.changeSeq == nil)
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func aBookkeepingFailureNeverFailsTheFetch() async throws {
        try await GrantServiceHarness.with { service in
            let home = try await Household.make(service, records: 2)
            let http = service.http
            func failures() async throws -> Double {
                OperationsTests.samples(try await http.send("GET", "metrics").text)["rescind_device_sync_state_failures_total"] ?? 0
            }
            let before = try await failures()
            // The table is gone (an operator's mistake, a broken migration): every note fails.
            try await service.withConnection { _ = try await $0.execute("ALTER TABLE device_sync_state RENAME TO device_sync_state_away") }
            #expect(try await home.adultB.client.wrappedKey(home.emma).fmkVersion == 1)
            #expect(try await home.adultB.client.changes(home.emma, since: 0, limit: 10).records.count == 2)
            #expect(try await failures() >= before + 2)
            // The device list, which reads the table, is what fails; put it back and it answers.
            try await service.withConnection { _ = try await $0.execute("ALTER TABLE device_sync_state_away RENAME TO device_sync_state") }
            #expect(try await Self.checkIns(of: home.adultB) == [])
        }
    }
}
