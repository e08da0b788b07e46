import Foundation
import RescindClient
import RescindCrypto
import RescindProtocol
import RescindTestSupport
import Testing

/// The exposure report of a revocation: taken in the commit's transaction from
/// each device's last check-in, sealed to the owner, served to that owner only.
@Suite struct RevocationExposureTests {
    /// Pages the change feed from the start, `limit` changes a page, and stops after `pages` pages.
    static func sync(_ session: UserSession, _ familyMemberID: UUID, limit: Int, pages: Int = .max) async throws -> Int64 {
        var cursor: Int64 = 0
        for _ in 0..<pages {
            let page = try await session.client.changes(familyMemberID, since: cursor, limit: limit)
            cursor = page.nextCursor
            if !page.hasMore { break }
        }
        return cursor
    }

    @Test(.timeLimit(.minutes(4)))
    func theReportCountsWhatEachDeviceOfTheRevokedUserHadFetched() async throws {
        try await GrantServiceHarness.with { service in
            let home = try await Household.make(service, records: 500)
            // Adult C's phone fetches the key and half of the records, 50 a page; the laptop the
            // whole family member; the tablet nothing; C's CLI (interactive) the key only; an old
            // phone 100 records, then it is retired.
            let phone = home.adultC
            let laptop = try await phone.addDevice(name: "Adult C's laptop", kind: .laptop)
            let tablet = try await phone.addDevice(name: "Adult C's tablet", kind: .tablet)
            let cli = try await phone.addDevice(name: "Adult C's terminal", role: .interactive)
            let oldPhone = try await phone.addDevice(name: "Adult C's old phone", kind: .phone)
            #expect(try await phone.client.wrappedKey(home.emma).fmkVersion == 1)
            let half = try await Self.sync(phone, home.emma, limit: 50, pages: 5)
            _ = try await laptop.client.wrappedKey(home.emma)
            let all = try await Self.sync(laptop, home.emma, limit: 200)
            _ = try await cli.client.wrappedKey(home.emma)
            _ = try await Self.sync(oldPhone, home.emma, limit: 100, pages: 1)
            try await phone.client.retireDevice(oldPhone.deviceID)
            // B, who keeps access, syncs too: not in C's report.
            _ = try await Self.sync(home.adultB, home.emma, limit: 500)
            let before = Date()

            let committed = try await home.adultA.revoke(home.emma, user: phone.keys.userID, reason: "custody change")
            let report = try await home.adultA.revocationExposure(committed.eventID)

            #expect(report.schema == RevocationExposure.schema)
            #expect(report.eventID == committed.eventID && report.familyMemberID == home.emma)
            #expect(report.revokedUserID == phone.keys.userID && report.ownerUserID == home.adultA.keys.userID)
            #expect(report.fromFMKVersion == 1 && report.newFMKVersion == 2 && report.recordsTotal == 500)
            let devices = Dictionary(uniqueKeysWithValues: report.devices.map { ($0.deviceID, $0) })
            #expect(Set(devices.keys) == [phone.deviceID, laptop.deviceID, tablet.deviceID, cli.deviceID, oldPhone.deviceID])

            let halfSynced = try #require(devices[phone.deviceID])
            #expect(halfSynced.fmkVersion == 1 && halfSynced.changeSeq == half)
            #expect(halfSynced.recordsFetched == 250 && halfSynced.changesSinceSync == 250)
            #expect(halfSynced.commanded && halfSynced.role == .agent && halfSynced.retiredAt == nil)
            let lastSync = try #require(halfSynced.lastSyncAt)
            #expect(lastSync <= before.addingTimeInterval(1) && lastSync > before.addingTimeInterval(-120))

            let full = try #require(devices[laptop.deviceID])
            #expect(full.fmkVersion == 1 && full.changeSeq == all && full.recordsFetched == 500 && full.changesSinceSync == 0)

            let never = try #require(devices[tablet.deviceID])
            #expect(never.neverSynced && never.fmkVersion == nil && never.changeSeq == nil)
            #expect(never.recordsFetched == 0 && never.changesSinceSync == 0 && never.commanded)

            let terminal = try #require(devices[cli.deviceID])
            #expect(terminal.role == .interactive && !terminal.commanded)
            #expect(terminal.fmkVersion == 1 && terminal.changeSeq == nil && terminal.recordsFetched == 0)

            let retired = try #require(devices[oldPhone.deviceID])
            #expect(retired.retiredAt != nil && !retired.commanded && retired.recordsFetched == 100)

            // The document conforms to its schema.
            let problems = try JSONSchemaValidator.load(RevocationExposure.schema).problems(try CanonicalJSON.encode(report))
            #expect(problems.isEmpty, "\(problems)")

            // Joined with acknowledgements the audit service has none of yet: every device that
            // fetched something still holds it, the never-synced tablet holds nothing.
            let joined = ExposureReport(exposure: report, status: nil)
            #expect(Set(joined.stillHolding.map(\.deviceID)) == [phone.deviceID, laptop.deviceID, oldPhone.deviceID])
            #expect(joined.lines.contains { $0.contains("FMK v1, 250 of 500 records") })
        }
    }

    @Test(.timeLimit(.minutes(3)))
    func theStoredReportIsSealedToTheOwnerAndServedToNobodyElse() async throws {
        try await GrantServiceHarness.with { service in
            let home = try await Household.make(service, records: 4)
            _ = try await Self.sync(home.adultC, home.emma, limit: 2)
            let committed = try await home.adultA.revoke(home.emma, user: home.adultC.keys.userID)

            // Stored sealed: the service cannot read it back; the owner's key opens it, C's and B's do not.
            let sealed = try await home.adultA.client.sealedRevocationExposure(committed.eventID)
            #expect(sealed.sealedToUserID == home.adultA.keys.userID && sealed.familyMemberID == home.emma)
            let stored = try await service.withConnection { connection in
                try await connection.query(
                    "SELECT sealed_report FROM revocation_exposures WHERE event_id = \(committed.eventID)"
                ).first!.decode(Data.self, column: 0)
            }
            #expect(stored == sealed.sealedReport)
            #expect((try? JSONSerialization.jsonObject(with: stored)) == nil)
            #expect(stored.range(of: Data(home.adultC.deviceID.uuidString.lowercased().utf8)) == nil)
            #expect(try UserSession.open(sealed, keys: home.adultA.keys).devices.first?.recordsFetched == 4)
            for other in [home.adultB, home.adultC] {
                #expect(throws: CryptoError.self) { try UserSession.open(sealed, keys: other.keys) }
            }

            // Another user's event, an unknown one, junk and no token: clear JSON errors.
            let http = service.http
            let path = "v1/revocations/\(committed.eventID)/exposure"
            for other in [home.adultB, home.adultC] {
                expectError(try await http.send("GET", path, token: try await other.token()), 404, "not_found")
            }
            let ownerToken = try await home.adultA.token()
            expectError(try await http.send("GET", "v1/revocations/\(UUID())/exposure", token: ownerToken), 404, "not_found")
            expectError(try await http.send("GET", "v1/revocations/not-an-event/exposure", token: ownerToken), 400, "bad_request")
            expectError(try await http.send("GET", "v1/revocations/%00%27;--/exposure", token: ownerToken), 400, "bad_request")
            expectError(try await http.send("GET", path), 401)
            expectError(try await http.send("GET", path, token: "forged"), 401)
            // A revocation in progress (a staging id, not an event) has no report either.
            let begun = try await home.adultA.client.beginRevocation(
                home.emma, BeginRevocationRequest(revokedUserID: home.adultB.keys.userID))
            expectError(try await http.send("GET", "v1/revocations/\(begun.revocationID)/exposure", token: ownerToken), 404)
            // Asking changed nothing stored.
            #expect(try await service.count("SELECT count(*) FROM revocation_exposures") == 1)
            let ok = try await http.send("GET", path, token: ownerToken)
            #expect(ok.status == 200)
            #expect(try ok.decode(SealedRevocationExposure.self).sealedReport == stored)
        }
    }

    /// A rotation revokes nobody, so it takes no report: its owner asking for one is told so (404
    /// `rotation_has_no_exposure_report`, naming where the stolen device's exposure is), anyone else
    /// learns nothing of the event (the plain 404 of an unknown one).
    @Test(.timeLimit(.minutes(3)))
    func aRotationsExposureIsAClearAnswer() async throws {
        try await GrantServiceHarness.with { service in
            let home = try await Household.make(service, records: 2)
            let rotated = try await home.adultA.rotate(home.emma, reason: "phone stolen")
            await expectFailure(404, "rotation_has_no_exposure_report") {
                try await home.adultA.client.sealedRevocationExposure(rotated.eventID)
            }
            do {
                _ = try await home.adultA.revocationExposure(rotated.eventID)
                Issue.record("a rotation's exposure report was served")
            } catch let error as GrantServiceError {
                #expect(error.message.contains("rescind device list"), "\(error)")
            }
            await expectFailure(404, "not_found") { try await home.adultB.client.sealedRevocationExposure(rotated.eventID) }
            await expectFailure(404, "not_found") { try await home.adultA.client.sealedRevocationExposure(UUID()) }
            #expect(try await service.count("SELECT count(*) FROM revocation_exposures") == 0)
        }
    }
}
