import Foundation
import GrantService
import RescindClient
import RescindProtocol
import RescindTestSupport
import Testing

/// The janitor: abandoned stagings expire, revoked grants are purged after retention, the devices'
/// kept commands are pruned after theirs.
@Suite struct MaintenanceTests {
    @Test func abandonedStagingsExpire() async throws {
        let adjust: (inout GrantServiceConfiguration) -> Void = { $0.lifetimes.janitorInterval = .milliseconds(200) }
        try await GrantServiceHarness.with(adjust) { service in
            let home = try await Household.make(service, records: 2)
            let revocation = try await home.adultA.client.beginRevocation(
                home.emma, BeginRevocationRequest(revokedUserID: home.adultC.keys.userID))
            let (commit, _) = try await home.adultA.stage(revocation)
            #expect(try await service.count("SELECT count(*) FROM staged_records") == 2)

            // Expired by moving its deadline, not by racing a short lifetime (a loaded machine
            // could spend it before the upload ends).
            try await service.expire(revocation.revocationID)
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

    @Test func theDeviceCommandRetentionIsNinetyDaysByDefaultAndAtLeastOne() throws {
        #expect(GrantServiceConfiguration().lifetimes.deviceCommandRetention == .seconds(90 * 86_400))
        let seven = try GrantServiceConfiguration(environment: ["RESCIND_GRANT_DEVICE_COMMAND_RETENTION_DAYS": "7"])
        #expect(seven.lifetimes.deviceCommandRetention == .seconds(7 * 86_400))
        // Zero would delete a command before a device offline for a minute could fetch it.
        #expect(throws: (any Error).self) {
            try GrantServiceConfiguration(environment: ["RESCIND_GRANT_DEVICE_COMMAND_RETENTION_DAYS": "0"])
        }
    }

    /// `device_commands` no longer grows for ever: commands older than the retention (default 90
    /// days) are deleted; younger ones stay fetchable by their device at check-in.
    @Test func keptDeviceCommandsArePrunedAfterTheirRetention() async throws {
        try await GrantServiceHarness.with({ $0.lifetimes.janitorInterval = .milliseconds(200) }) { service in
            let home = try await Household.make(service, records: 1)
            let c = home.adultC.keys.userID
            let old = try await home.adultA.revoke(home.emma, user: c)
            try await home.adultA.grant(home.emma, to: c)
            let recent = try await home.adultA.revoke(home.emma, user: c)
            let oldCount = try await service.count("SELECT count(*) FROM device_commands WHERE event_id = \(old.eventID)")
            let recentCount = try await service.count("SELECT count(*) FROM device_commands WHERE event_id = \(recent.eventID)")
            #expect(oldCount == 3 && recentCount == 3)

            // One statement ages both revocations' commands: the sweep that removes the old ones saw the recent ones too.
            try await service.withConnection { connection in
                try await connection.execute(
                    """
                    UPDATE device_commands SET created_at = now() - CASE WHEN event_id = \(old.eventID)
                        THEN interval '90 days 1 hour' ELSE interval '89 days' END
                    """)
            }
            try await service.eventually("the janitor prunes the commands past retention") {
                try await service.count("SELECT count(*) FROM device_commands WHERE event_id = \(old.eventID)") == 0
            }
            #expect(try await service.count("SELECT count(*) FROM device_commands WHERE event_id = \(recent.eventID)") == 3)
            // What a device fetches at check-in is what is left: the recent command, still signed as published.
            let fetched = try await home.adultB.client.deviceCommands(after: 0).commands
            #expect(fetched.count == 1)
            let command = try SignedMessage<DeviceCommand>.verified(
                from: try #require(fetched.first).envelope, schema: DeviceCommand.schema, key: service.serviceKey)
            #expect(command.payload.eventID == recent.eventID && command.payload.deviceID == home.adultB.deviceID)
        }
    }
}
