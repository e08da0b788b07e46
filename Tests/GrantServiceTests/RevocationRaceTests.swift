import Foundation
import RescindCrypto
import RescindProtocol
import RescindTestSupport
import Testing

@testable import RescindClient

/// `UserSession.complete` racing a change it cannot see in its FMK check: something commits
/// after the key is fetched and before the records are downloaded. The owner must get the
/// service's own 409, with nothing decrypted and the revocation abandoned.
@Suite(.serialized) struct RevocationRaceTests {
    @Test func aRevocationCommittedAfterTheKeyFetchIsAVersionConflict() async throws {
        try await GrantServiceHarness.with { service in
            let home = try await Household.make(service, records: 5)
            let ownerPhone = home.adultA
            let ownerTablet = try await ownerPhone.addDevice(name: "Adult A's iPad")
            let revocation = try await ownerPhone.client.beginRevocation(
                home.emma, BeginRevocationRequest(revokedUserID: home.adultC.keys.userID))

            let progress = ProgressLog()
            let error = await #expect(throws: GrantServiceError.self) {
                try await ownerPhone.complete(revocation, uploadBatchSize: 500, progress: { progress.append($0) }) {
                    // The phone holds FMK v1; the tablet revokes B and moves every record to v2.
                    _ = try await ownerTablet.revoke(home.emma, user: home.adultB.keys.userID)
                }
            }
            #expect(error?.status == 409 && error?.code == "version_conflict", "\(String(describing: error))")
            #expect(progress.phases == [.downloading], "nothing was decrypted")
            #expect(try await service.count("SELECT count(*) FROM revocation_stagings") == 0, "the revocation was abandoned")

            // The tablet's revocation stands: v2, B out, C (not revoked after all) reads everything.
            #expect(try await ownerPhone.client.fmkVersion(home.emma).currentFMKVersion == 2)
            await expectFailure(403, "access_revoked") { try await home.adultB.client.wrappedKey(home.emma) }
            #expect(try await home.adultC.readRecords(home.emma).count == 5)
            // Beginning again from v2 succeeds.
            let retried = try await ownerPhone.revoke(home.emma, user: home.adultC.keys.userID)
            #expect(retried.newFMKVersion == 3 && retried.recordsReencrypted == 5)
        }
    }

    /// A grantee who keeps access deletes a record while the owner's client re-encrypts: the
    /// deletion stands (the commit does not bring the record back) and the revocation commits.
    @Test func aRecordDeletedAfterTheRevocationBeganStaysDeleted() async throws {
        try await GrantServiceHarness.with { service in
            let home = try await Household.make(service, records: 4)
            let revocation = try await home.adultA.client.beginRevocation(
                home.emma, BeginRevocationRequest(revokedUserID: home.adultC.keys.userID))

            let committed = try await home.adultA.complete(revocation, uploadBatchSize: 500, progress: { _ in }) {
                try await home.adultB.client.deleteRecord(home.emma, home.recordIDs[0])
            }
            // 3 records and the deleted one's kept version (restorable by the owner).
            #expect(committed.newFMKVersion == 2 && committed.recordsReencrypted == 4)
            let remaining = try await home.adultB.readRecords(home.emma)
            #expect(Set(remaining.keys) == Set(home.recordIDs.dropFirst()))
            await expectFailure(403, "access_revoked") { try await home.adultC.client.wrappedKey(home.emma) }
        }
    }
}
