import Foundation
import RescindCrypto
import RescindPostgres
import RescindProtocol
import RescindTestSupport
import Testing

@testable import RescindClient

/// The seeds' household: Adult A owns Emma, whose records are under FMK v1,
/// and shared her with Adults B and C.
struct Household {
    let adultA: UserSession
    let adultB: UserSession
    let adultC: UserSession
    let emma: UUID
    let fmk: SecretKey
    let recordIDs: [UUID]

    static func make(_ service: GrantServiceHarness, records: Int = 3) async throws -> Household {
        let adultA = try await service.user("Adult A")
        let adultB = try await service.user("Adult B")
        let adultC = try await service.user("Adult C")
        let (emma, fmk) = try await adultA.createFamilyMember()
        var recordIDs: [UUID] = []
        for index in 0..<records {
            recordIDs.append(try await adultA.putRecord(emma, plaintext: Array("record \(index)".utf8), fmk: fmk, version: 1))
        }
        try await adultA.grant(emma, to: adultB.keys.userID)
        try await adultA.grant(emma, to: adultC.keys.userID)
        return Household(adultA: adultA, adultB: adultB, adultC: adultC, emma: emma, fmk: fmk, recordIDs: recordIDs)
    }
}

extension UserSession {
    /// A bearer token of this session's device, for raw requests.
    func token() async throws -> String { try await client.bearerToken() }

    /// A begun revocation's work done on the device: every record re-encrypted under a new
    /// FMK, and the new FMK wrapped for each remaining grantee.
    func reencrypt(_ revocation: RevocationResponse) async throws -> (records: [StagedRecord], grants: [NewGrant], newFMK: SecretKey) {
        let (oldFMK, _) = try await currentFMK(revocation.familyMemberID)
        let records = try await allRecords(revocation.familyMemberID)
        let newFMK = SecretKey()
        let staged = try await RecordCipher.reseal(records, from: oldFMK, to: newFMK, newVersion: revocation.newFMKVersion)
        let grants = try revocation.remainingGrantees.map {
            try newGrant(newFMK, for: $0, familyMemberID: revocation.familyMemberID, version: revocation.newFMKVersion)
        }
        return (staged, grants, newFMK)
    }

    /// Everything `complete` does short of committing: re-encrypts, uploads in batches,
    /// and returns the commit request that would finish the job.
    func stage(_ revocation: RevocationResponse, batchSize: Int = 1000) async throws -> (commit: CommitRevocationRequest, newFMK: SecretKey) {
        let (staged, grants, newFMK) = try await reencrypt(revocation)
        for start in stride(from: 0, to: staged.count, by: batchSize) {
            _ = try await client.uploadRevocationBatch(
                revocation.revocationID, Array(staged[start..<min(start + batchSize, staged.count)]))
        }
        let statement = try await revokeStatement(revocation, grants: grants, newFMK: newFMK)
        return (CommitRevocationRequest(newFMKVersion: revocation.newFMKVersion, grants: grants, statement: statement), newFMK)
    }

    /// Re-encrypts and uploads the deleted and overwritten versions the family member keeps now,
    /// as `complete` does before each commit attempt.
    /// - Returns: how many were uploaded.
    @discardableResult
    func stageKeptVersions(_ revocation: RevocationResponse, newFMK: SecretKey) async throws -> Int {
        var staged: Set<UUID> = []
        let (oldFMK, _) = try await currentFMK(revocation.familyMemberID)
        return try await stageVersions(revocation, from: oldFMK, to: newFMK, staged: &staged, batchSize: 500)
    }
}

extension GrantServiceHarness {
    var http: RawHTTP { RawHTTP(baseURL: baseURL) }

    /// One integer from a query on the service's schema.
    func count(_ query: PostgresQuery) async throws -> Int {
        try await withConnection { try await $0.query(query).first!.decode(Int.self, column: 0) }
    }

    /// Ends a revocation staging's lifetime now, as if it had run out (tests that need an
    /// expired staging move its deadline instead of racing a short lifetime).
    func expire(_ revocationID: UUID) async throws {
        try await withConnection {
            try await $0.execute(
                "UPDATE revocation_stagings SET expires_at = now() - interval '1 second' WHERE staging_id = \(revocationID)")
        }
    }

    /// Polls `condition` until it holds; records an issue and throws after `timeout`.
    func eventually(
        _ what: String, timeout: Duration = .seconds(10), sourceLocation: SourceLocation = #_sourceLocation,
        _ condition: () async throws -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try await condition() { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("timed out waiting until \(what)", sourceLocation: sourceLocation)
        throw HarnessError.timedOut(what)
    }
}

/// Expects the call to fail with this HTTP status (and error code).
func expectFailure<T>(
    _ status: Int, _ code: String? = nil, sourceLocation: SourceLocation = #_sourceLocation,
    _ call: () async throws -> T
) async {
    do {
        _ = try await call()
        Issue.record("expected HTTP \(status), but the call succeeded", sourceLocation: sourceLocation)
    } catch let error as GrantServiceError {
        #expect(error.status == status, "\(error)", sourceLocation: sourceLocation)
        if let code { #expect(error.code == code, "\(error)", sourceLocation: sourceLocation) }
    } catch {
        Issue.record("expected HTTP \(status), got \(error)", sourceLocation: sourceLocation)
    }
}
