import Foundation
import RescindPostgres
import RescindProtocol
import RescindTestSupport
import Testing

@testable import RescindClient

/// A revocation's upload batches in flight at once: each batch is its own
/// request and transaction, so they may arrive in any order, several at once, and again.
@Suite struct RevocationUploadTests {
    /// The staged rows, their bodies and the staging's running count, as stored.
    static func staged(_ service: GrantServiceHarness, _ revocation: RevocationResponse) async throws -> (rows: Int, count: Int, bodies: Int) {
        (
            try await service.count("SELECT count(*) FROM staged_records WHERE staging_id = \(revocation.revocationID)"),
            try await service.count("SELECT staged_count FROM revocation_stagings WHERE staging_id = \(revocation.revocationID)"),
            try await service.count("SELECT count(*) FROM record_bodies")
        )
    }

    /// Batches out of order, four at once, one of them sent again after its answer (a retry):
    /// every record staged once, the count right, no body left over, and the commit goes through.
    @Test func batchesInAnyOrderAtOnceAndRetriedCommit() async throws {
        try await GrantServiceHarness.with { service in
            let home = try await Household.make(service, records: 40)
            let before = try await home.adultB.readRecords(home.emma)
            let a = home.adultA
            let revocation = try await a.client.beginRevocation(home.emma, BeginRevocationRequest(revokedUserID: home.adultC.keys.userID))
            let (records, grants, newFMK) = try await a.reencrypt(revocation)
            let batches = stride(from: 0, to: records.count, by: 5).map { Array(records[$0..<min($0 + 5, records.count)]) }
            let client = a.client
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, batch) in batches.reversed().enumerated() {
                    if index >= 4 { try await group.next() }
                    group.addTask { _ = try await client.uploadRevocationBatch(revocation.revocationID, batch) }
                }
                try await group.waitForAll()
            }
            let retried = try await client.uploadRevocationBatch(revocation.revocationID, batches[3])
            #expect(retried == UploadBatchResponse(staged: 5, totalStaged: 40, totalExpected: 40))
            #expect(try await Self.staged(service, revocation) == (rows: 40, count: 40, bodies: 80))

            let statement = try await a.revokeStatement(revocation, grants: grants, newFMK: newFMK)
            let committed = try await client.commitRevocation(
                revocation.revocationID, CommitRevocationRequest(newFMKVersion: 2, grants: grants, statement: statement))
            #expect(committed.recordsReencrypted == 40)
            #expect(try await home.adultB.currentFMK(home.emma).fmk == newFMK)
            #expect(try await home.adultB.readRecords(home.emma) == before)
            #expect(try await service.count("SELECT count(*) FROM staged_records") == 0)
        }
    }

    /// The same record uploaded twice at once (a client that retries a batch whose answer it has
    /// not had yet): the upload that loses the race gets 409 `upload_in_flight` and keeps nothing
    /// (no staged row, no body, no count); sending it again replaces the winner's upload.
    /// The race is made certain: the first upload is held just before its count by a lock on the
    /// staging row, the second then waits on the first's staged row.
    @Test func theSameRecordUploadedTwiceAtOnceIsRefusedClearly() async throws {
        try await GrantServiceHarness.with { service in
            let home = try await Household.make(service, records: 3)
            let a = home.adultA
            let revocation = try await a.client.beginRevocation(home.emma, BeginRevocationRequest(revokedUserID: home.adultC.keys.userID))
            let (records, grants, newFMK) = try await a.reencrypt(revocation)
            let client = a.client
            let waiting: PostgresQuery = """
                SELECT count(*) FROM pg_stat_activity
                WHERE wait_event_type = 'Lock' AND query LIKE '%INSERT INTO staged_records%'
                """
            let outcomes = try await service.withConnection { holder in
                // Key-share compatible, so both uploads load their staging; their count update waits.
                try await holder.execute("BEGIN")
                try await holder.execute(
                    "SELECT 1 FROM revocation_stagings WHERE staging_id = \(revocation.revocationID) FOR NO KEY UPDATE")
                let first = Task { try await client.uploadRevocationBatch(revocation.revocationID, [records[0], records[1]]) }
                try await service.eventually("the first upload waits on the staging row") { try await service.count(waiting) >= 1 }
                let second = Task { try await client.uploadRevocationBatch(revocation.revocationID, [records[0], records[2]]) }
                try await service.eventually("the second upload waits too") { try await service.count(waiting) >= 2 }
                try await holder.execute("ROLLBACK")
                return (await first.result, await second.result)
            }
            // Which of the two wins is the database's choice; exactly one does.
            var won: [UploadBatchResponse] = []
            var refused: [GrantServiceError] = []
            for outcome in [outcomes.0, outcomes.1] {
                switch outcome {
                case .success(let answer): won.append(answer)
                case .failure(let error as GrantServiceError): refused.append(error)
                case .failure(let error): Issue.record("unexpected \(error)")
                }
            }
            #expect(won == [UploadBatchResponse(staged: 2, totalStaged: 2, totalExpected: 3)])
            #expect(refused.map(\.status) == [409] && refused.map(\.code) == ["upload_in_flight"])
            // Nothing of the refused upload stays: two rows, two staged bodies beside the three records'.
            #expect(try await Self.staged(service, revocation) == (rows: 2, count: 2, bodies: 5))

            // Sent again, the batches replace what the winner staged.
            _ = try await client.uploadRevocationBatch(revocation.revocationID, [records[0], records[2]])
            _ = try await client.uploadRevocationBatch(revocation.revocationID, [records[1]])
            #expect(try await Self.staged(service, revocation) == (rows: 3, count: 3, bodies: 6))
            let statement = try await a.revokeStatement(revocation, grants: grants, newFMK: newFMK)
            let committed = try await client.commitRevocation(
                revocation.revocationID, CommitRevocationRequest(newFMKVersion: 2, grants: grants, statement: statement))
            #expect(committed.recordsReencrypted == 3)
            #expect(try await home.adultB.currentFMK(home.emma).fmk == newFMK)
            #expect(try await home.adultB.readRecords(home.emma).count == 3)
        }
    }
}
