import Foundation
import GrantService
import RescindClient
import RescindProtocol
import RescindTestSupport
import Testing

/// The janitor: abandoned stagings expire, revoked grants are purged after retention.
@Suite struct MaintenanceTests {
    @Test func abandonedStagingsExpire() async throws {
        let adjust: (inout GrantServiceConfiguration) -> Void = {
            $0.lifetimes.staging = .seconds(2)
            $0.lifetimes.janitorInterval = .milliseconds(200)
        }
        try await GrantServiceHarness.with(adjust) { service in
            let home = try await Household.make(service, records: 2)
            let revocation = try await home.adultA.client.beginRevocation(
                home.emma, BeginRevocationRequest(revokedUserID: home.adultC.keys.userID))
            let (commit, _) = try await home.adultA.stage(revocation)
            #expect(try await service.count("SELECT count(*) FROM staged_records") == 2)

            try await Task.sleep(for: .seconds(revocation.expiresAt.timeIntervalSinceNow + 0.1))
            // Expired means gone for the API at once, and from the tables at the next sweep.
            await expectFailure(404, "not_found") { try await home.adultA.client.commitRevocation(revocation.revocationID, commit) }
            await expectFailure(404, "not_found") { try await home.adultA.client.uploadRevocationBatch(revocation.revocationID, []) }
            try await service.eventually("the janitor deletes the staging") {
                try await service.count("SELECT count(*) FROM revocation_stagings") == 0
            }
            #expect(try await service.count("SELECT count(*) FROM staged_records") == 0)
            #expect(try await home.adultA.client.fmkVersion(home.emma).currentFMKVersion == 1)
            #expect(try await home.adultC.client.wrappedKey(home.emma).fmkVersion == 1)
        }
    }

    @Test func revokedGrantsArePurgedAfterTheRetentionPeriod() async throws {
        let retention = try GrantServiceConfiguration(environment: ["RESCIND_GRANT_RETENTION_DAYS": "0"]).lifetimes.revokedGrantRetention
        #expect(retention == .zero)
        #expect(GrantServiceConfiguration().lifetimes.revokedGrantRetention == .seconds(30 * 86_400))
        let adjust: (inout GrantServiceConfiguration) -> Void = {
            $0.lifetimes.revokedGrantRetention = retention
            $0.lifetimes.janitorInterval = .milliseconds(200)
        }
        try await GrantServiceHarness.with(adjust) { service in
            let home = try await Household.make(service, records: 1)
            let c = home.adultC.keys.userID
            let committed = try await home.adultA.revoke(home.emma, user: c)

            try await service.eventually("the revoked grant is purged") {
                try await service.count("SELECT count(*) FROM access_grants WHERE grantee_user_id = \(c)") == 0
            }
            #expect(Set(try await home.adultA.client.grants(home.emma).map(\.granteeUserID)) == [home.adultA.keys.userID, home.adultB.keys.userID])
            // The revocation itself stays on record.
            #expect(try await service.count("SELECT count(*) FROM revocation_events WHERE event_id = \(committed.eventID)") == 1)
            // C has no standing at all any more.
            await expectFailure(403, "forbidden") { try await home.adultC.client.wrappedKey(home.emma) }

            let events = try await service.messages(.accessEvents, count: 4).map {
                try SignedMessage<AccessEvent>.verified(from: $0.value!, schema: AccessEvent.schema, key: service.serviceKey).payload
            }
            #expect(events.map(\.kind) == [.familyMemberCreated, .accessGranted, .accessGranted, .revokedGrantsPurged])
            let purge = try #require(events.last)
            #expect(purge.targetUserID == c && purge.actorUserID == home.adultA.keys.userID && purge.familyMemberID == home.emma)
            #expect(purge.fmkVersion == 1)
            #expect(purge.details["policy"] == "retention")
        }
    }
}
