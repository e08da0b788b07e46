import Foundation
import RescindCrypto
import RescindProtocol
import RescindTestSupport
import Synchronization
import Testing

@testable import RescindClient

/// Adversary 1 against an owner: Adult A's unlocked phone is stolen. It holds A's identity, X25519
/// and master keys, a live token and every FMK of the family members A owns. After `device retire`,
/// `identity rotate` and a rotation that revokes nobody, nothing re-encrypted or written afterwards
/// opens with anything the phone held, and the thief can neither block nor undo the rotation.
@Suite(.serialized) struct OwnerStolenDeviceTests {
    struct Crash: Error {}

    @Test func theThiefOfTheOwnersPhoneGetsNothingAfterRetireRotateAndRotation() async throws {
        try await GrantServiceHarness.with { service in
            let home = try await Household.make(service, records: 3)
            let phone = home.adultA
            let (liam, liamFMK) = try await phone.createFamilyMember()
            _ = try await phone.putRecord(liam, plaintext: Array("liam".utf8), fmk: liamFMK, version: 1)
            try await phone.grant(liam, to: home.adultB.keys.userID)
            let laptop = try await phone.addDevice(name: "Adult A's laptop")
            // What the thief holds: the phone's keys (its keystore), its token and the FMKs it fetched.
            let stolenKeys = phone.keys
            let stolenFMKs = [home.emma: try await phone.currentFMK(home.emma).fmk, liam: liamFMK]

            // Before A's identity keys are rotated, the recovery retires the phone and waits: a rotation
            // wrapped and signed with keys the thief holds would protect nothing.
            var plan = OwnerStolenDeviceRecovery(deviceID: phone.deviceID, reason: "phone stolen")
            let first = try await laptop.advance(&plan) { _ in }
            #expect(first == [.retired(phone.deviceID), .waitingForIdentityRotation])
            #expect(!plan.planned)
            #expect(try await service.count("SELECT count(*) FROM revocation_stagings") == 0)
            // The retired token is refused, for reading and for starting a rotation alike.
            await expectFailure(401, "device_retired") { try await phone.client.wrappedKey(home.emma) }
            await expectFailure(401, "device_retired") { try await phone.client.beginRotation(home.emma, BeginRotationRequest()) }

            // A rotates the identity keys on the laptop, then the recovery rotates both family members,
            // the second run after a crash right after the first commit was saved.
            let rotated = try await IdentityRotationTests.rotate(laptop)
            let saved = Mutex<OwnerStolenDeviceRecovery?>(nil)
            await #expect(throws: Crash.self) {
                _ = try await rotated.advance(&plan) { recorded in
                    saved.withLock { $0 = recorded }
                    if recorded.rotated.count == 1 { throw Crash() }
                }
            }
            plan = try #require(saved.withLock { $0 })
            #expect(plan.rotated.count == 1 && plan.familyMembers.count == 2)
            let second = try await rotated.advance(&plan) { _ in }
            #expect(plan.isFinished && plan.rotated == [home.emma: 2, liam: 2], "\(second)")
            #expect(try await service.count("SELECT count(*) FROM revocation_events WHERE revoked_user_id IS NULL") == 2)
            #expect(try await service.count("SELECT count(*) FROM key_statements WHERE kind = 'rotate'") == 2)
            #expect(try await service.count("SELECT count(*) FROM revocation_stagings") == 0)
            // Nobody was revoked: B and C read every record at v2.
            #expect(try await service.count("SELECT count(*) FROM access_grants WHERE revoked_at IS NOT NULL") == 0)
            #expect(try await home.adultB.readRecords(home.emma).count == 3)
            #expect(try await home.adultC.readRecords(home.emma).count == 3)
            #expect(try await rotated.readRecords(liam) == [try #require(try await rotated.allRecords(liam).first).recordID: Array("liam".utf8)])
            // Once more: nothing to do.
            #expect(try await rotated.advance(&plan) { _ in }.isEmpty)

            // Nothing re-encrypted or written afterwards opens with an FMK or key the phone held.
            let (emmaV2, _) = try await home.adultB.currentFMK(home.emma)
            _ = try await home.adultB.putRecord(home.emma, plaintext: Array("written after".utf8), fmk: emmaV2, version: 2)
            for member in [home.emma, liam] {
                let records = try await rotated.allRecords(member)
                #expect(records.allSatisfy { $0.fmkVersion == 2 })
                for record in records {
                    #expect(throws: (any Error).self) { try RecordCipher.open(record, fmk: stolenFMKs[member]!) }
                }
                let ownCopy = try await rotated.client.wrappedKey(member)
                #expect(throws: (any Error).self) { try phone.unwrap(ownCopy) }  // the phone's master key
            }

            // The key history verifies end to end (from seq 1, as a new device would) with the new kind,
            // ending on the new identity key.
            let statements = try await rotated.client.keyStatements(home.emma, after: 0).statements
            let entry = try KeyHistoryVerifier.extend(familyMemberID: home.emma, cached: nil, statements: statements)
            #expect(statements.map(\.statement.kind) == [.create, .grant, .grant, .rekey, .rotate])
            #expect(entry.fmkVersion == 2 && entry.ownerIdentityKey == Data(rotated.keys.identityKey.publicKey.rawRepresentation))

            // The thief cannot undo it: a rotation signed with the stolen identity key is refused by
            // every verifier, and by the service even with a live token; nothing changes.
            let thiefFMK = SecretKey()
            let forged = try phone.nextStatement(
                after: entry, kind: .rotate, holders: entry.head.statement.holders, fmkVersion: 3,
                commitment: Data(FMKCommitment.commit(thiefFMK, familyMemberID: home.emma, version: 3)))
            #expect(throws: KeyHistoryError.self) {
                try KeyHistoryVerifier.extend(familyMemberID: home.emma, cached: entry, statements: [forged])
            }
            let rotation = try await rotated.client.beginRotation(home.emma, BeginRotationRequest(reason: "thief"))
            var (commit, _) = try await rotated.stage(rotation)
            // Nor can it block one in flight with the phone's token: no abandon, no upload, no commit.
            await expectFailure(401, "device_retired") { try await phone.client.abandonRevocation(rotation.revocationID) }
            await expectFailure(401, "device_retired") { try await phone.client.uploadRevocationBatch(rotation.revocationID, []) }
            await expectFailure(401, "device_retired") { try await phone.client.commitRevocation(rotation.revocationID, commit) }
            #expect(try await service.count("SELECT count(*) FROM revocation_stagings") == 1)
            var statement = try #require(commit.statement).statement
            statement.signerIdentityKey = Data(stolenKeys.identityKey.publicKey.rawRepresentation)
            commit.statement = try phone.signStatement(statement, with: stolenKeys.identityKey)
            await expectFailure(422, "invalid_key_statement") { try await rotated.client.commitRevocation(rotation.revocationID, commit) }
            try await rotated.client.abandonRevocation(rotation.revocationID)
            #expect(try await rotated.client.fmkVersion(home.emma).currentFMKVersion == 2)

            // A compromised grant service cannot forge a rotation either: it swaps Liam's rotate
            // statement for one signed with the stolen key (or any key but A's current one); B's
            // client, which has not read Liam since, refuses it and keeps nothing.
            let stored = try #require(try await rotated.client.keyStatements(liam, after: 0).statements.last)
            #expect(stored.statement.kind == .rotate)
            var swapped = stored.statement
            swapped.signerIdentityKey = Data(stolenKeys.identityKey.publicKey.rawRepresentation)
            let signedBySteal = try phone.signStatement(swapped, with: stolenKeys.identityKey)
            _ = try await service.withConnection { connection in
                try await connection.execute(
                    """
                    UPDATE key_statements SET body = \(try CanonicalJSON.encode(swapped)), signature = \(signedBySteal.signature),
                        hash = \(try signedBySteal.hash())
                    WHERE family_member_id = \(liam) AND seq = \(swapped.seq)
                    """)
            }
            do {
                _ = try await home.adultB.readRecords(liam)
                Issue.record("a rotation not signed by the owner's current key was accepted")
            } catch let error as KeyHistoryError {
                #expect(error.code == .unknownSigner, "\(error)")
            }
            #expect(home.adultB.keyHistory.entry(liam) == nil, "nothing of the refused history kept")
        }
    }

    /// A rotation keeps the revocation's rules: an edit made while it runs is refused at the
    /// commit (409) and re-encrypted, never lost; a commit missing a record (422) or a holder
    /// (422) changes nothing; only the owner may rotate, and a rotation names nobody revoked.
    @Test func aRotationLosesNoEditAndRefusesWhatIsIncomplete() async throws {
        try await GrantServiceHarness.with { service in
            let home = try await Household.make(service, records: 4)
            let (a, b) = (home.adultA, home.adultB)
            await expectFailure(403) { try await b.client.beginRotation(home.emma, BeginRotationRequest()) }
            await expectFailure(400) {
                try await a.client.beginRotation(home.emma, BeginRotationRequest(reason: String(repeating: "x", count: 501)))
            }
            #expect(try await service.count("SELECT count(*) FROM revocation_stagings") == 0)

            let rotation = try await a.client.beginRotation(home.emma, BeginRotationRequest(reason: "phone stolen"))
            #expect(rotation.revokedUserID == nil && rotation.newFMKVersion == 2)
            #expect(Set(rotation.remainingGrantees.map(\.userID)) == [a.keys.userID, b.keys.userID, home.adultC.keys.userID])
            let added = UUID()
            let committed = try await a.complete(
                rotation, uploadBatchSize: 2, progress: { _ in }, afterFetchingKey: {},
                beforeCommit: { catchUps in
                    guard catchUps == 0 else { return }
                    _ = try await b.putRecord(home.emma, recordID: home.recordIDs[1], plaintext: Array("edited by B".utf8), fmk: home.fmk, version: 1)
                    _ = try await b.putRecord(home.emma, recordID: added, plaintext: Array("added by B".utf8), fmk: home.fmk, version: 1)
                })
            // 4 live records and the version B's edit replaced (kept, restorable by the owner).
            #expect(committed.newFMKVersion == 2 && committed.recordsReencrypted == 6)
            let records = try await home.adultC.readRecords(home.emma)
            #expect(records[home.recordIDs[1]] == Array("edited by B".utf8) && records[added] == Array("added by B".utf8))
            #expect(records.count == 5)
            #expect(try await service.count("SELECT count(*) FROM records WHERE fmk_version <> 2") == 0)

            // A commit missing a record, then one leaving out a holder: refused, nothing changed.
            let second = try await a.client.beginRotation(home.emma, BeginRotationRequest())
            let (staged, grants, newFMK) = try await a.reencrypt(second)
            _ = try await a.client.uploadRevocationBatch(second.revocationID, Array(staged.dropFirst()))
            let statement = try await a.revokeStatement(second, grants: grants, newFMK: newFMK)
            #expect(statement.statement.kind == .rotate && statement.statement.revokedUserID == nil)
            await expectFailure(422, "records_missing") {
                try await a.client.commitRevocation(
                    second.revocationID, CommitRevocationRequest(newFMKVersion: 3, grants: grants, statement: statement))
            }
            _ = try await a.client.uploadRevocationBatch(second.revocationID, Array(staged.prefix(1)))
            try await a.stageKeptVersions(second, newFMK: newFMK)
            let withoutC = grants.filter { $0.granteeUserID != home.adultC.keys.userID }
            await expectFailure(422, "grants_mismatch") {
                try await a.client.commitRevocation(
                    second.revocationID,
                    CommitRevocationRequest(
                        newFMKVersion: 3, grants: withoutC, statement: try await a.revokeStatement(second, grants: withoutC, newFMK: newFMK)))
            }
            // A copy for C wrapped to a key that is not C's current one: refused, nothing changed.
            var toStaleKey = grants
            let c = try #require(toStaleKey.firstIndex { $0.granteeUserID == home.adultC.keys.userID })
            toStaleKey[c].granteeAgreementPublicKey = Data(X25519.PrivateKey().publicKey.rawRepresentation)
            await expectFailure(409, "stale_identity_key") {
                try await a.client.commitRevocation(
                    second.revocationID,
                    CommitRevocationRequest(
                        newFMKVersion: 3, grants: toStaleKey, statement: try await a.revokeStatement(second, grants: toStaleKey, newFMK: newFMK)))
            }
            // A `revoke` statement (naming C) on a rotation's commit is refused too.
            var revokeKind = statement.statement
            revokeKind.kind = .revoke
            revokeKind.revokedUserID = home.adultC.keys.userID
            await expectFailure(422, "invalid_key_statement") {
                try await a.client.commitRevocation(
                    second.revocationID,
                    CommitRevocationRequest(newFMKVersion: 3, grants: grants, statement: try a.signStatement(revokeKind)))
            }
            #expect(try await a.client.fmkVersion(home.emma).currentFMKVersion == 2)
            #expect(try await home.adultC.readRecords(home.emma).count == 5)
            // The complete commit goes through.
            _ = try await a.client.commitRevocation(
                second.revocationID, CommitRevocationRequest(newFMKVersion: 3, grants: grants, statement: statement))
            // Every holder's new copy was stored (one statement for all of them): each opens v3.
            for holder in [a, b, home.adultC] {
                #expect(try await holder.client.wrappedKey(home.emma).fmkVersion == 3)
                #expect(try await holder.readRecords(home.emma) == records)
            }
            #expect(try await service.count("SELECT count(*) FROM access_grants WHERE fmk_version <> 3 AND revoked_at IS NULL") == 0)
        }
    }

    /// The verifiers (the CLI's and the agent's are one, `KeyHistoryVerifier`) refuse a `rotate`
    /// statement that revokes or adds someone, or that is not signed by the owner's key.
    @Test func aRotateStatementMustNameExactlyTheHoldersBefore() async throws {
        try await GrantServiceHarness.with { service in
            let home = try await Household.make(service, records: 1)
            let a = home.adultA
            let entry = try await a.verifiedKey(home.emma).entry
            let holders = entry.head.statement.holders
            let commitment = Data(FMKCommitment.commit(SecretKey(), familyMemberID: home.emma, version: 2))
            func refused(_ statement: SignedKeyStatement) -> KeyChainViolation.Code? {
                do {
                    _ = try KeyHistoryVerifier.extend(familyMemberID: home.emma, cached: entry, statements: [statement])
                    return nil
                } catch let error as KeyHistoryError { return error.code } catch { return .malformed }
            }
            let honest = try a.nextStatement(after: entry, kind: .rotate, holders: holders, fmkVersion: 2, commitment: commitment)
            #expect(refused(honest) == nil)
            let droppingC = try a.nextStatement(
                after: entry, kind: .rotate, holders: holders.filter { $0.userID != home.adultC.keys.userID }, fmkVersion: 2,
                commitment: commitment)
            #expect(refused(droppingC) == .malformed)
            let sameVersion = try a.nextStatement(after: entry, kind: .rotate, holders: holders, fmkVersion: 1, commitment: commitment)
            #expect(refused(sameVersion) == .versionGap)
            let byAnotherKey = try a.withKeys(UserKeys.generate(userID: a.keys.userID))
                .nextStatement(after: entry, kind: .rotate, holders: holders, fmkVersion: 2, commitment: commitment)
            #expect(refused(byAnotherKey) == .unknownSigner)
            var namingRevoked = honest.statement
            namingRevoked.revokedUserID = home.adultC.keys.userID
            #expect(refused(try a.signStatement(namingRevoked)) == .malformed)
        }
    }
}
