import Foundation
import RescindCrypto
import RescindProtocol
import RescindTestSupport
import Synchronization
import Testing

@testable import RescindClient

/// A revocation never loses an edit, and the user being revoked cannot delay it.
///
/// While the owner's client re-encrypts, people who keep access go on writing. The commit
/// swaps in a staged record only if the stored record still carries the change sequence it
/// was re-encrypted from; otherwise it answers 409 `records_changed` and the client
/// re-encrypts what changed and commits again. The revoked user's writes end at `begin`.
@Suite(.serialized) struct RevocationKeepsEditsTests {
    /// B edits, adds and deletes records after the owner's client downloaded them and before it
    /// commits: every one of those changes survives, re-encrypted under the new FMK.
    @Test func editsCreationsAndDeletionsDuringTheRevocationSurvive() async throws {
        try await GrantServiceHarness.with { service in
            let home = try await Household.make(service, records: 4)
            let b = home.adultB
            let revocation = try await home.adultA.client.beginRevocation(
                home.emma, BeginRevocationRequest(revokedUserID: home.adultC.keys.userID))
            let added = UUID()
            let progress = ProgressLog()
            let committed = try await home.adultA.complete(
                revocation, uploadBatchSize: 2, progress: { progress.append($0) }, afterFetchingKey: {},
                beforeCommit: { catchUps in
                    guard catchUps == 0 else { return }
                    _ = try await b.putRecord(home.emma, recordID: home.recordIDs[1], plaintext: Array("edited by B".utf8), fmk: home.fmk, version: 1)
                    _ = try await b.putRecord(home.emma, recordID: added, plaintext: Array("added by B".utf8), fmk: home.fmk, version: 1)
                    try await b.client.deleteRecord(home.emma, home.recordIDs[2])
                })
            // 4 live records and the 2 versions B's edit and deletion kept (restorable by the owner).
            #expect(committed.newFMKVersion == 2 && committed.recordsReencrypted == 6)
            #expect(progress.phases.contains(.catchingUp), "\(progress.phases)")
            #expect(progress.phases.last == .committed)

            let records = try await b.readRecords(home.emma)
            #expect(records == [
                home.recordIDs[0]: Array("record 0".utf8),
                home.recordIDs[1]: Array("edited by B".utf8),
                home.recordIDs[3]: Array("record 3".utf8),
                added: Array("added by B".utf8),
            ])
            #expect(try await service.count("SELECT count(*) FROM records WHERE fmk_version <> 2") == 0)
            #expect(try await service.count("SELECT count(*) FROM revocation_stagings") == 0)
        }
    }

    /// The service's side, without the client's catch-up: a commit that would overwrite an edit is
    /// refused with 409 `records_changed`, changes nothing, and goes through once the edited
    /// record is re-encrypted from its new content.
    @Test func aCommitThatWouldOverwriteAnEditIsRefused() async throws {
        try await GrantServiceHarness.with { service in
            let home = try await Household.make(service, records: 3)
            let a = home.adultA
            let revocation = try await a.client.beginRevocation(home.emma, BeginRevocationRequest(revokedUserID: home.adultC.keys.userID))
            let (commit, newFMK) = try await a.stage(revocation)
            _ = try await home.adultB.putRecord(home.emma, recordID: home.recordIDs[0], plaintext: Array("late edit".utf8), fmk: home.fmk, version: 1)

            let answer = try await service.http.send(
                "POST", "v1/revocations/\(revocation.revocationID)/commit", token: try await a.token(), json: commit)
            expectError(answer, 409, "records_changed")
            #expect(answer.text.contains(home.recordIDs[0].uuidString.lowercased()), "names the record: \(answer.text)")
            #expect(try await a.client.fmkVersion(home.emma).currentFMKVersion == 1, "nothing committed")
            #expect(try await home.adultB.readRecords(home.emma)[home.recordIDs[0]] == Array("late edit".utf8))

            // Re-encrypt the edited record as it is now; the commit goes through and keeps the edit.
            let edited = try await a.client.record(home.emma, home.recordIDs[0])
            let staged = try await RecordCipher.reseal([edited], from: home.fmk, to: newFMK, newVersion: 2)
            _ = try await a.client.uploadRevocationBatch(revocation.revocationID, staged)
            // The version the edit replaced is kept, and re-encrypted like the records.
            #expect(try await a.stageKeptVersions(revocation, newFMK: newFMK) == 1)
            _ = try await a.client.commitRevocation(revocation.revocationID, commit)
            #expect(try await home.adultB.readRecords(home.emma)[home.recordIDs[0]] == Array("late edit".utf8))
        }
    }

    /// A record created after `begin` and never uploaded is a change (409), not a client's
    /// omission (422); a record that existed unchanged and was never uploaded stays a 422.
    @Test func aRecordCreatedSinceIsAChangeAndAnOmissionIsMissing() async throws {
        try await GrantServiceHarness.with { service in
            let home = try await Household.make(service, records: 2)
            let a = home.adultA
            let revocation = try await a.client.beginRevocation(home.emma, BeginRevocationRequest(revokedUserID: home.adultC.keys.userID))
            let (records, grants, _) = try await a.reencrypt(revocation)
            let commit = CommitRevocationRequest(newFMKVersion: 2, grants: grants)
            let token = try await a.token()
            let path = "v1/revocations/\(revocation.revocationID)/commit"
            _ = try await a.client.uploadRevocationBatch(revocation.revocationID, [records[0]])
            _ = try await home.adultB.putRecord(home.emma, plaintext: Array("new".utf8), fmk: home.fmk, version: 1)
            expectError(try await service.http.send("POST", path, token: token, json: commit), 422, "records_missing")
            _ = try await a.client.uploadRevocationBatch(revocation.revocationID, [records[1]])
            expectError(try await service.http.send("POST", path, token: token, json: commit), 409, "records_changed")
        }
    }

    /// Adult C, being revoked, tries to sabotage the revocation by writing between `begin` and
    /// `commit` — editing, adding, deleting, in a loop. Every write is refused, nothing changes,
    /// and the revocation commits at its first attempt. Abandoning it gives C's writes back.
    @Test func theRevokedUserCannotDelayTheirOwnRevocation() async throws {
        try await GrantServiceHarness.with { service in
            let home = try await Household.make(service, records: 3)
            let c = home.adultC
            let before = try await home.adultB.readRecords(home.emma)
            let revocation = try await home.adultA.client.beginRevocation(home.emma, BeginRevocationRequest(revokedUserID: c.keys.userID))

            let sabotage = Task {
                var refused = 0
                for round in 0..<20 {
                    for attempt in [
                        { _ = try await c.putRecord(home.emma, recordID: home.recordIDs[0], plaintext: Array("C \(round)".utf8), fmk: home.fmk, version: 1) },
                        { _ = try await c.putRecord(home.emma, plaintext: Array("C adds \(round)".utf8), fmk: home.fmk, version: 1) },
                        { try await c.client.deleteRecord(home.emma, home.recordIDs[1]) },
                    ] as [@Sendable () async throws -> Void] {
                        do {
                            try await attempt()
                        } catch let error as GrantServiceError where error.status == 403 && error.code == "revocation_pending" {
                            refused += 1
                        }
                    }
                }
                return refused
            }
            #expect(try await sabotage.value == 60, "every write refused with 403 revocation_pending")
            #expect(try await home.adultB.readRecords(home.emma) == before, "nothing changed")

            let progress = ProgressLog()
            let committed = try await home.adultA.complete(revocation, uploadBatchSize: 500, progress: { progress.append($0) })
            #expect(committed.newFMKVersion == 2 && !progress.phases.contains(.catchingUp))
            await expectFailure(403, "access_revoked") {
                try await c.putRecord(home.emma, plaintext: Array("too late".utf8), fmk: home.fmk, version: 1)
            }

            // An abandoned revocation ends the read-only spell: B is begun and abandoned, B writes again.
            let second = try await home.adultA.client.beginRevocation(home.emma, BeginRevocationRequest(revokedUserID: home.adultB.keys.userID))
            let (fmk2, _) = try await home.adultB.currentFMK(home.emma)
            await expectFailure(403, "revocation_pending") {
                try await home.adultB.putRecord(home.emma, plaintext: Array("B".utf8), fmk: fmk2, version: 2)
            }
            try await home.adultA.client.abandonRevocation(second.revocationID)
            _ = try await home.adultB.putRecord(home.emma, plaintext: Array("B".utf8), fmk: fmk2, version: 2)
        }
    }

    /// Stolen device: `revoke --everywhere` begins every revocation at once, so the user loses
    /// write access to every family member before the first commit.
    @Test func revokingEverywhereEndsWritesEverywhereAtOnce() async throws {
        try await GrantServiceHarness.with { service in
            let home = try await Household.make(service, records: 2)
            let (liam, liamFMK) = try await home.adultA.createFamilyMember()
            try await home.adultA.grant(liam, to: home.adultC.keys.userID)
            let revocations = try await home.adultA.client.beginUserRevocation(home.adultC.keys.userID, BeginUserRevocationRequest())
            #expect(revocations.count == 2)
            for (familyMember, fmk) in [(home.emma, home.fmk), (liam, liamFMK)] {
                await expectFailure(403, "revocation_pending") {
                    try await home.adultC.putRecord(familyMember, plaintext: Array("C".utf8), fmk: fmk, version: 1)
                }
            }
            for revocation in revocations {
                _ = try await home.adultA.complete(revocation, uploadBatchSize: 500, progress: { _ in })
            }
            await expectFailure(403, "access_revoked") { try await home.adultC.client.wrappedKey(liam) }
        }
    }

    /// The bar of the issue: 100 edits by a grantee who keeps access, made while a
    /// 10,000-record revocation runs, and not one is lost. An edit refused because the
    /// revocation committed first (409 `version_conflict`) is retried at the new version, as
    /// a real client does; every edit the service accepted must be there afterwards.
    @Test func aHundredConcurrentEditsDuringATenThousandRecordRevocationLoseNothing() async throws {
        try await GrantServiceHarness.with { service in
            let home = try await Household.make(service, records: 0)
            var expected = try await service.seedRecords(home.emma, count: 10_000, plaintextBytes: 256, fmk: home.fmk)
            let ids = Array(expected.keys).sorted { $0.uuidString < $1.uuidString }
            let edited = Array(ids.prefix(100))
            let b = home.adultB
            let editsDone = EditCount()

            let revocation = try await home.adultA.client.beginRevocation(
                home.emma, BeginRevocationRequest(revokedUserID: home.adultC.keys.userID))
            @Sendable func edit(_ index: Int) async throws {
                let plaintext = Array("edit \(index) by B".utf8)
                while true {
                    let (fmk, version) = try await b.currentFMK(home.emma)
                    do {
                        _ = try await b.putRecord(home.emma, recordID: edited[index], plaintext: plaintext, fmk: fmk, version: version)
                        editsDone.increment()
                        return
                    } catch let error as GrantServiceError where error.code == "version_conflict" {
                        continue
                    }
                }
            }
            // 90 edits in the background, four at a time, from the moment the revocation began…
            let background = Task {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for lane in 0..<4 {
                        group.addTask { for index in stride(from: 10 + lane, to: 100, by: 4) { try await edit(index) } }
                    }
                    try await group.waitForAll()
                }
            }
            // …and 10 more between the upload and the first commit, so that at least one catch-up happens.
            let progress = ProgressLog()
            let committed = try await home.adultA.complete(
                revocation, uploadBatchSize: 500, progress: { progress.append($0) }, afterFetchingKey: {},
                beforeCommit: { catchUps in
                    if catchUps == 0 { for index in 0..<10 { try await edit(index) } }
                })
            try await background.value
            #expect(editsDone.value == 100)
            #expect(committed.newFMKVersion == 2)
            #expect(progress.phases.contains(.catchingUp))

            for (index, id) in edited.enumerated() { expected[id] = Array("edit \(index) by B".utf8) }
            let records = try await b.readRecords(home.emma)
            #expect(records.count == 10_000)
            let lost = expected.filter { records[$0.key] != $0.value }.count
            #expect(lost == 0, "\(lost) edit(s) or record(s) lost")
        }
    }

    /// A record id deleted in one family member, created again in another and deleted there: each
    /// family member's change feed announces its own deletion, and only its own.
    @Test func tombstonesBelongToTheirFamilyMember() async throws {
        try await GrantServiceHarness.with { service in
            let home = try await Household.make(service, records: 1)
            let a = home.adultA
            let (liam, liamFMK) = try await a.createFamilyMember()
            let reused = home.recordIDs[0]
            try await a.client.deleteRecord(home.emma, reused)
            let emmaCursor = try await a.client.changes(home.emma, since: 0).nextCursor

            _ = try await a.putRecord(liam, recordID: reused, plaintext: Array("liam".utf8), fmk: liamFMK, version: 1)
            let liamCursor = try await a.client.changes(liam, since: 0).nextCursor
            try await a.client.deleteRecord(liam, reused)

            let liamChanges = try await a.client.changes(liam, since: liamCursor)
            #expect(liamChanges.deletedRecordIDs == [reused], "Liam's devices learn of the deletion")
            let emmaChanges = try await a.client.changes(home.emma, since: emmaCursor)
            #expect(emmaChanges.deletedRecordIDs.isEmpty && emmaChanges.records.isEmpty, "Emma's feed is untouched")
            #expect(try await a.client.changes(home.emma, since: 0).deletedRecordIDs == [reused])
            #expect(try await service.count("SELECT count(*) FROM record_tombstones WHERE record_id = \(reused)") == 2)
        }
    }
}

/// Edits the service accepted, counted from several tasks.
private final class EditCount: Sendable {
    private let count = Mutex(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
