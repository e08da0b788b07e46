import Foundation
import Logging
import RescindClient
import RescindCrypto
import RescindPostgres
import RescindProtocol
import RescindTestSupport
import Synchronization
import Testing

/// A revocation commits everything or nothing, whatever its size, a dying
/// connection or a concurrent revocation.
@Suite struct RevocationAtomicityTests {
    /// A digest of every table a commit writes, to compare before and after.
    static func fingerprint(_ service: GrantServiceHarness) async throws -> [String: String] {
        let tables = [
            "records", "record_tombstones", "access_grants", "family_members", "revocation_events", "revocation_stagings",
            "staged_records", "outbox",
        ]
        return try await service.withConnection { connection in
            var digests: [String: String] = [:]
            for table in tables {
                digests[table] = try await connection.query(
                    "SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) FROM \(identifier: table) t"
                ).first!.decode(String.self, column: 0)
            }
            return digests
        }
    }

    /// Statistics taken while a family member and the staging table were nearly empty once
    /// made PostgreSQL plan the commit's swap as a nested loop over every staged record for
    /// every record (quadratic: a 10,000-record commit ran past its 30 s deadline in the
    /// benchmark). With the same stale statistics the swap must stay linear.
    @Test func theSwapStaysLinearWithStaleStatistics() async throws {
        try await GrantServiceHarness.with { service in
            let adultA = try await service.user("Adult A")
            let adultB = try await service.user("Adult B")
            let (liam, liamFMK) = try await adultA.createFamilyMember()
            _ = try await adultA.putRecord(liam, plaintext: Array("liam".utf8), fmk: liamFMK, version: 1)
            try await adultA.grant(liam, to: adultB.keys.userID)
            let other = try await adultA.client.beginRevocation(liam, BeginRevocationRequest(revokedUserID: adultB.keys.userID))
            let staged = try await RecordCipher.reseal(
                try await adultA.client.changes(liam, since: 0).records, from: liamFMK, to: SecretKey(), newVersion: 2)
            _ = try await adultA.client.uploadRevocationBatch(other.revocationID, staged)
            // Freeze statistics that know one record and one staged record, of someone else.
            try await service.withConnection { connection in
                try await connection.executeScript(
                    """
                    ANALYZE records; ANALYZE staged_records;
                    ALTER TABLE records SET (autovacuum_enabled = off);
                    ALTER TABLE staged_records SET (autovacuum_enabled = off);
                    """)
            }

            let (emma, fmk) = try await adultA.createFamilyMember()
            _ = try await service.seedRecords(emma, count: 8_000, plaintextBytes: 256, fmk: fmk)
            try await adultA.grant(emma, to: adultB.keys.userID)
            let phases = ProgressClock()
            let committed = try await adultA.revoke(emma, user: adultB.keys.userID, uploadBatchSize: 1000) {
                phases.record($0.phase)
            }
            #expect(committed.recordsReencrypted == 8_000)
            // The linear swap takes well under a second here; the quadratic one took ~5 s.
            let commit = try #require(phases.duration(of: .committing))
            #expect(commit < .seconds(3), "the commit of 8,000 records took \(commit)")
            try await adultA.client.abandonRevocation(other.revocationID)
        }
    }

    @Test func tenThousandRecordsAreSwappedInOneTransaction() async throws {
        try await GrantServiceHarness.with { service in
            let adultA = try await service.user("Adult A")
            let adultB = try await service.user("Adult B")
            let adultC = try await service.user("Adult C")
            let (emma, fmk) = try await adultA.createFamilyMember()
            let plaintexts = try await service.seedRecords(emma, count: 10_000, plaintextBytes: 1024, fmk: fmk)
            try await adultA.grant(emma, to: adultB.keys.userID)
            try await adultA.grant(emma, to: adultC.keys.userID)

            // Watches the records while the revocation runs: every snapshot must show all
            // of them at v1 under version 1, or all at v2 under version 2, never a mix.
            let observer = Task {
                try await service.withConnection { connection in
                    var seen: Set<[Int]> = []
                    while !Task.isCancelled {
                        let row = try await connection.query(
                            """
                            SELECT count(*) FILTER (WHERE fmk_version = 1), count(*) FILTER (WHERE fmk_version = 2),
                                   (SELECT current_fmk_version FROM family_members WHERE family_member_id = \(emma))
                            FROM records WHERE family_member_id = \(emma)
                            """
                        ).first!
                        seen.insert([try row.decode(Int.self, column: 0), try row.decode(Int.self, column: 1), try row.decode(Int.self, column: 2)])
                        try? await Task.sleep(for: .milliseconds(5))
                    }
                    return seen
                }
            }
            let started = ContinuousClock.now
            let committed = try await adultA.revoke(emma, user: adultC.keys.userID, uploadBatchSize: 1000)
            let elapsed = ContinuousClock.now - started
            // One last look after the commit, then stop watching.
            try await Task.sleep(for: .milliseconds(50))
            observer.cancel()
            let seen = try await observer.value

            #expect(committed.recordsReencrypted == 10_000)
            #expect(seen.isSubset(of: [[10_000, 0, 1], [0, 10_000, 2]]), "a reader saw a partial revocation: \(seen)")
            #expect(seen.contains([0, 10_000, 2]))
            #expect(elapsed < .seconds(60), "10,000-record revocation took \(elapsed)")
            #expect(try await adultB.readRecords(emma) == plaintexts)
            await expectFailure(403, "access_revoked") { try await adultC.client.wrappedKey(emma) }
        }
    }

    @Test func aCommitKilledHalfWayLeavesNoTrace() async throws {
        try await GrantServiceHarness.with { service in
            let home = try await Household.make(service, records: 0)
            let c = home.adultC.keys.userID
            _ = try await service.seedRecords(home.emma, count: 200, plaintextBytes: 256, fmk: home.fmk)
            let revocation = try await home.adultA.client.beginRevocation(home.emma, BeginRevocationRequest(revokedUserID: c))
            let (commit, newFMK) = try await home.adultA.stage(revocation)
            let before = try await Self.fingerprint(service)

            // Hold C's grant row. The commit rewrites every record, then waits to end that grant.
            let blocker = try await PostgresConnection.connect(configuration: service.database, logger: Logger(label: "test.blocker"))
            try await blocker.execute("BEGIN")
            try await blocker.execute(
                "SELECT 1 FROM access_grants WHERE family_member_id = \(home.emma) AND grantee_user_id = \(c) FOR UPDATE")
            let blockerPID = try await blocker.query("SELECT pg_backend_pid()").first!.decode(Int32.self, column: 0)

            let commitTask = Task { try await home.adultA.client.commitRevocation(revocation.revocationID, commit) }
            var victim: (pid: Int32, application: String, query: String)?
            // Observed from fresh connections: pg_stat_activity is snapshotted per transaction.
            try await service.eventually("the commit waits for the held grant row") {
                victim = try await service.withConnection { connection in
                    try await connection.query(
                        """
                        SELECT pid, application_name, query FROM pg_stat_activity
                        WHERE \(blockerPID) = ANY(pg_blocking_pids(pid))
                        """
                    ).first.map { try $0.decode(Int32.self, String.self, String.self) }
                }
                return victim != nil
            }
            let (pid, application, query) = try #require(victim)
            #expect(application == "rescind-grant-service")
            #expect(query.contains("UPDATE access_grants SET revoked_at"))
            // Half-way: every record already has a new version written by the commit's
            // (uncommitted) transaction, which is what marks the old one's xmax.
            let rewritten = try await service.count(
                """
                SELECT count(*) FROM records r, pg_stat_activity a
                WHERE a.pid = \(pid) AND r.family_member_id = \(home.emma) AND r.xmax = a.backend_xid
                """)
            #expect(rewritten == 200)

            let terminated = try await blocker.query("SELECT pg_terminate_backend(\(pid))").first!.decode(Bool.self, column: 0)
            #expect(terminated)
            let failure = await #expect(throws: GrantServiceError.self) { try await commitTask.value }
            // The commit's connection was lost: 503 database_unavailable (retry), not a 500.
            #expect(failure?.status == 503 && failure?.code == "database_unavailable")
            try await blocker.execute("ROLLBACK")
            await blocker.close()

            #expect(try await Self.fingerprint(service) == before)
            #expect(try await home.adultC.client.wrappedKey(home.emma).fmkVersion == 1)

            // The pool replaced the killed connection and the same commit now goes through, once.
            let committed = try await home.adultA.client.commitRevocation(revocation.revocationID, commit)
            #expect(committed.newFMKVersion == 2 && committed.recordsReencrypted == 200)
            #expect(try await home.adultB.currentFMK(home.emma).fmk == newFMK)
            let events = try await service.messages(.revocationEvents, count: 1)
            let event = try SignedMessage<RevocationEvent>.verified(
                from: try #require(events.first?.value), schema: RevocationEvent.schema, key: service.serviceKey)
            #expect(event.payload.eventID == committed.eventID)
            #expect(try await service.count("SELECT count(*) FROM revocation_events") == 1)
        }
    }

    enum Contest: String, CaseIterable, Sendable {
        /// Both revoke the same user.
        case sameUser
        /// One revokes B, the other C.
        case differentUsers
    }

    @Test(arguments: Contest.allCases)
    func twoConcurrentRevocationsExactlyOneWins(_ contest: Contest) async throws {
        try await GrantServiceHarness.with { service in
            let home = try await Household.make(service, records: 0)
            let plaintexts = try await service.seedRecords(home.emma, count: 300, plaintextBytes: 256, fmk: home.fmk)
            let a = home.adultA
            let second = contest == .sameUser ? home.adultC : home.adultB
            let revocations = [
                try await a.client.beginRevocation(home.emma, BeginRevocationRequest(revokedUserID: home.adultC.keys.userID)),
                try await a.client.beginRevocation(home.emma, BeginRevocationRequest(revokedUserID: second.keys.userID)),
            ]
            let staged = [try await a.stage(revocations[0]), try await a.stage(revocations[1])]

            let results = await withTaskGroup(of: (Int, Result<RevocationCommitted, GrantServiceError>).self) { group in
                for index in 0..<2 {
                    group.addTask {
                        do {
                            return (index, .success(try await a.client.commitRevocation(revocations[index].revocationID, staged[index].commit)))
                        } catch let error as GrantServiceError {
                            return (index, .failure(error))
                        } catch {
                            return (index, .failure(GrantServiceError(status: 0, code: "transport", message: "\(error)")))
                        }
                    }
                }
                return await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
            }
            let winners = results.filter { if case .success = $0.value { true } else { false } }.map(\.key)
            try #require(winners.count == 1, "results: \(results)")
            let winner = winners[0]
            guard case .failure(let loss) = results[1 - winner] else { return }
            #expect(loss.status == 409 && loss.code == "version_conflict")

            #expect(try await service.count("SELECT count(*) FROM revocation_events") == 1)
            #expect(try await a.client.fmkVersion(home.emma).currentFMKVersion == 2)
            #expect(try await a.currentFMK(home.emma).fmk == staged[winner].newFMK)
            #expect(try await a.readRecords(home.emma) == plaintexts)
            let revoked = revocations[winner].revokedUserID
            await expectFailure(403, "access_revoked") { try await (revoked == home.adultB.keys.userID ? home.adultB : home.adultC).client.wrappedKey(home.emma) }
            // The loser's staging is still there for its owner to abandon.
            try await a.client.abandonRevocation(revocations[1 - winner].revocationID)
            #expect(try await service.count("SELECT count(*) FROM revocation_stagings") == 0)
        }
    }
}

/// When each phase of a revocation began, from its progress reports.
private final class ProgressClock: Sendable {
    private let starts = Mutex<[(RevocationProgress.Phase, ContinuousClock.Instant)]>([])

    func record(_ phase: RevocationProgress.Phase) {
        starts.withLock { if $0.last?.0 != phase { $0.append((phase, .now)) } }
    }

    /// From the first report of `phase` to the first report of the next phase.
    func duration(of phase: RevocationProgress.Phase) -> Duration? {
        starts.withLock { starts in
            guard let index = starts.firstIndex(where: { $0.0 == phase }), index + 1 < starts.count else { return nil }
            return starts[index + 1].1 - starts[index].1
        }
    }
}
