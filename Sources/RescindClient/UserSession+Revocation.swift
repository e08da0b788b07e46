import Foundation
import RescindCrypto
import RescindObservability
import RescindProtocol
import Tracing

/// How far a revocation has come, for progress bars.
public struct RevocationProgress: Sendable, Equatable {
    public enum Phase: String, Sendable {
        /// `catchingUp`: records were edited or created while the revocation ran; they are
        /// re-encrypted from their new content before the commit is tried again.
        case downloading, reencrypting, uploading, committing, catchingUp, committed
    }

    public var phase: Phase
    public var recordsDone: Int
    public var recordsTotal: Int
    /// Commits refused because records changed meanwhile (`catchingUp` rounds so far).
    public var catchUps: Int = 0
}

extension UserSession {
    /// Revokes a user from a family member: new FMK, every record re-encrypted and
    /// uploaded in batches, the new FMK wrapped for everyone who keeps access (never
    /// the revoked user), then one atomic commit.
    ///
    /// - Parameter uploadBatchSize: records per upload request.
    /// - Parameter progress: called as work advances (from the calling task).
    /// - Throws: `GrantServiceError` (e.g. 409 when another revocation committed first);
    ///   nothing is changed on the service unless the commit succeeded.
    public func revoke(
        _ familyMemberID: UUID, user revokedUserID: UUID, reason: String? = nil, uploadBatchSize: Int = 500,
        progress: @Sendable (RevocationProgress) -> Void = { _ in }
    ) async throws -> RevocationCommitted {
        let revocation = try await client.beginRevocation(
            familyMemberID, BeginRevocationRequest(revokedUserID: revokedUserID, reason: reason))
        try await expect(revocation, of: familyMemberID, revoking: revokedUserID)
        return try await complete(revocation, uploadBatchSize: uploadBatchSize, progress: progress)
    }

    /// Checks that the service began what was asked (this family member, or any when nil; this
    /// revoked user, or nobody for a rotation): a service that answers a revocation of C with one
    /// of B would have the owner re-wrap for C and sign B out. Anything else is abandoned.
    /// - Throws: `GrantServiceError` 502 `unexpected_response`.
    func expect(_ revocation: RevocationResponse, of familyMemberID: UUID?, revoking revokedUserID: UUID?) async throws {
        guard familyMemberID.map({ $0 == revocation.familyMemberID }) ?? true, revocation.revokedUserID == revokedUserID else {
            try? await client.abandonRevocation(revocation.revocationID)
            throw GrantServiceError(
                status: 502, code: "unexpected_response",
                message: "the grant service began a revocation of another user or family member than asked: abandoned, nothing was wrapped")
        }
    }

    /// Stolen device: revokes a user from every family member I own, one atomic commit each.
    public func revokeEverywhere(
        user revokedUserID: UUID, reason: String? = nil, progress: @Sendable (RevocationProgress) -> Void = { _ in }
    ) async throws -> [RevocationCommitted] {
        var committed: [RevocationCommitted] = []
        for revocation in try await client.beginUserRevocation(revokedUserID, BeginUserRevocationRequest(reason: reason)) {
            try await expect(revocation, of: nil, revoking: revokedUserID)
            committed.append(try await complete(revocation, uploadBatchSize: 500, progress: progress))
        }
        return committed
    }

    /// What revoking a user would do, changing nothing: from one family member, or (nil) from
    /// every family member I own that they can read, as `revokeEverywhere` would choose them.
    /// Each preview names the devices the commit would command, chosen by the commit's own query.
    public func revocationPreviews(user revokedUserID: UUID, familyMember: UUID?) async throws -> [RevocationPreview] {
        if let familyMember { return [try await client.revocationPreview(familyMember, user: revokedUserID)] }
        var previews: [RevocationPreview] = []
        for member in try await client.familyMembers() where member.ownerUserID == keys.userID {
            let grants = try await client.grants(member.familyMemberID)
            guard grants.contains(where: { $0.granteeUserID == revokedUserID && $0.revokedAt == nil }) else { continue }
            previews.append(try await client.revocationPreview(member.familyMemberID, user: revokedUserID))
        }
        return previews
    }

    /// Re-encrypts, uploads and commits a begun revocation; abandons it on failure.
    /// - Throws: `GrantServiceError` 409 `version_conflict` when another revocation committed
    ///   since this one began, found before anything is decrypted: begin again from the current
    ///   version. Records edited, created or deleted meanwhile by people who keep access are not
    ///   an error: the commit refuses to overwrite an edit (409 `records_changed`), and this
    ///   re-encrypts the changed records and commits again, up to `maximumCatchUps` times.
    public func complete(
        _ revocation: RevocationResponse, uploadBatchSize: Int, progress: @Sendable (RevocationProgress) -> Void
    ) async throws -> RevocationCommitted {
        try await complete(revocation, uploadBatchSize: uploadBatchSize, progress: progress, afterFetchingKey: {})
    }

    /// As the public `complete`. `afterFetchingKey` runs between fetching the FMK and downloading
    /// the records: the window in which a competing revocation can commit unseen by the version
    /// check. Tests commit one there to make that race deterministic.
    func complete(
        _ revocation: RevocationResponse, uploadBatchSize: Int, progress: @Sendable (RevocationProgress) -> Void,
        afterFetchingKey: () async throws -> Void, beforeCommit: (Int) async throws -> Void = { _ in }
    ) async throws -> RevocationCommitted {
        let started = ContinuousClock.now
        // One span for the whole revocation and one per step (no-ops with tracing off): the
        // commit's request carries it to the grant service, and from there to every device.
        let span = InstrumentationSystem.tracer.startAnySpan("revocation")
        span.attributes["rescind.fmk_version"] = revocation.newFMKVersion
        defer { span.end() }
        do {
            return try await ServiceContext.withValue(span.context) {
                try await complete(
                    revocation, uploadBatchSize: uploadBatchSize, progress: progress, started: started, span: span,
                    afterFetchingKey: afterFetchingKey, beforeCommit: beforeCommit)
            }
        } catch {
            span.recordError(error)
            span.setStatus(SpanStatus(code: .error))
            throw error
        }
    }

    private func complete(
        _ revocation: RevocationResponse, uploadBatchSize: Int, progress: @Sendable (RevocationProgress) -> Void,
        started: ContinuousClock.Instant, span: any Span,
        afterFetchingKey: () async throws -> Void, beforeCommit: (Int) async throws -> Void
    ) async throws -> RevocationCommitted {
        do {
            progress(RevocationProgress(phase: .downloading, recordsDone: 0, recordsTotal: revocation.recordIDs.count))
            let verified = try await step("fetch key") { try await verifiedKey(revocation.familyMemberID) }
            let (oldFMK, version) = (verified.fmk, verified.wrapped.fmkVersion)
            guard version == revocation.fromFMKVersion else {
                throw Self.versionConflict("the FMK changed since the revocation began")
            }
            // Before any work: whom the new FMK will be wrapped to, each key verified here.
            let recipients = try await step("verify recipients") {
                try await verifiedRecipients(revocation.remainingGrantees, of: revocation, verified: verified.entry)
            }
            try await afterFetchingKey()
            var (records, cursor) = try await step("download") { try await recordsToReencrypt(revocation, since: 0) }
            let total = records.count
            span.attributes["rescind.records"] = total

            let newFMK = SecretKey()
            progress(RevocationProgress(phase: .reencrypting, recordsDone: 0, recordsTotal: total))
            var batches = try await step("re-encrypt") {
                try await RecordCipher.resealIntoBatches(
                    records, from: oldFMK, to: newFMK, newVersion: revocation.newFMKVersion, batchSize: uploadBatchSize)
            }
            progress(RevocationProgress(phase: .uploading, recordsDone: 0, recordsTotal: total))
            let uploaded = try await step("upload") {
                try await upload(batches, of: revocation) { uploaded in
                    progress(RevocationProgress(phase: .uploading, recordsDone: uploaded, recordsTotal: total))
                }
            }

            var grants = try recipients.map {
                try newGrant(newFMK, for: $0, familyMemberID: revocation.familyMemberID, version: revocation.newFMKVersion)
            }
            var catchUps = 0
            // The deleted and overwritten versions the owner can restore: re-encrypted like the
            // records before every commit attempt (a commit that would leave one under the old FMK
            // is refused), those made meanwhile included.
            var stagedVersions: Set<UUID> = []
            while true {
                _ = try await stageVersions(
                    revocation, from: oldFMK, to: newFMK, staged: &stagedVersions, batchSize: uploadBatchSize)
                progress(RevocationProgress(phase: .committing, recordsDone: uploaded, recordsTotal: total, catchUps: catchUps))
                try await beforeCommit(catchUps)
                let elapsed = ContinuousClock.now - started
                do {
                    let request = CommitRevocationRequest(
                        newFMKVersion: revocation.newFMKVersion, grants: grants, clientDurationMs: elapsed.wholeMilliseconds,
                        statement: try revokeStatement(revocation, grants: grants, newFMK: newFMK, after: verified.entry))
                    let committed = try await step("commit") { try await client.commitRevocation(revocation.revocationID, request) }
                    span.attributes["rescind.catch_ups"] = catchUps
                    progress(RevocationProgress(phase: .committed, recordsDone: uploaded, recordsTotal: total, catchUps: catchUps))
                    return committed
                } catch let error as GrantServiceError where error.code == "stale_identity_key" && catchUps < Self.maximumCatchUps {
                    // A grantee rotated their identity keys since the revocation began: wrap for their
                    // current key, if this client can verify it (a compromised service can send this
                    // answer too, to offer a key of its own next).
                    catchUps += 1
                    var current: [UserResponse] = []
                    for grantee in revocation.remainingGrantees { current.append(try await client.user(grantee.userID)) }
                    grants = try await verifiedRecipients(current, of: revocation, verified: verified.entry).map {
                        try newGrant(newFMK, for: $0, familyMemberID: revocation.familyMemberID, version: revocation.newFMKVersion)
                    }
                } catch let error as GrantServiceError where error.code == "records_changed" && catchUps < Self.maximumCatchUps {
                    // Someone who keeps access edited or added records while this revocation ran: the
                    // service refused to overwrite them. Re-encrypt them as they are now and try again.
                    catchUps += 1
                    (records, cursor) = try await recordsToReencrypt(revocation, since: cursor)
                    progress(RevocationProgress(phase: .catchingUp, recordsDone: 0, recordsTotal: records.count, catchUps: catchUps))
                    batches = try await RecordCipher.resealIntoBatches(
                        records, from: oldFMK, to: newFMK, newVersion: revocation.newFMKVersion, batchSize: uploadBatchSize)
                    _ = try await upload(batches, of: revocation) { done in
                        progress(RevocationProgress(phase: .catchingUp, recordsDone: done, recordsTotal: records.count, catchUps: catchUps))
                    }
                }
            }
        } catch {
            try? await client.abandonRevocation(revocation.revocationID)
            throw error
        }
    }

    /// `body` under a child span named `name` of the current one.
    private func step<T>(_ name: String, _ body: () async throws -> T) async throws -> T {
        try await InstrumentationSystem.tracer.withAnySpan(name) { _ in try await body() }
    }

    /// How many times a commit refused for records changed meanwhile is retried after
    /// re-encrypting them. Only users who keep access can still write (the revoked user's
    /// writes end when the revocation begins), so this bounds a busy family, not an attacker.
    public static let maximumCatchUps = 8

    /// Batches in flight at once by default: while the service writes one, the next is on its way
    /// (one at a time left the database, the network and this client each idle in turn). Each
    /// batch is its own request and transaction on its own pool connection, in any order.
    public static let uploadsInFlight = 2

    /// Uploads the batches, `uploadsInFlight` (this session's, at least one) at a time.
    /// - Returns: the number of records uploaded; `uploaded` hears the running total.
    func upload(
        _ batches: [BinaryRecords.UploadBatchWriter], of revocation: RevocationResponse, uploaded: (Int) -> Void
    ) async throws -> Int {
        let (client, limit) = (client, max(1, uploadsInFlight))
        return try await withThrowingTaskGroup(of: Int.self) { group in
            var (next, inFlight, done) = (0, 0, 0)
            repeat {
                while inFlight < limit, next < batches.count {
                    let batch = batches[next]
                    group.addTask {
                        _ = try await client.uploadRevocationBatch(revocation.revocationID, batch)
                        return batch.count
                    }
                    (next, inFlight) = (next + 1, inFlight + 1)
                }
                guard let count = try await group.next() else { break }
                (inFlight, done) = (inFlight - 1, done + count)
                uploaded(done)
            } while inFlight > 0 || next < batches.count
            return done
        }
    }

    /// The records a revocation re-encrypts as they are now — all of them from cursor 0, or
    /// those changed since an earlier download — and the cursor after them. Downloaded after
    /// the FMK was fetched and checked: a revocation that commits in between moves every record
    /// to a newer FMK version, found here before anything is decrypted and reported as the
    /// service's own 409 (re-encrypting would only fail authentication, which says nothing
    /// about why). Records created or deleted since the revocation began need nothing special:
    /// every live record is re-encrypted, and the commit does not bring back a deleted one.
    func recordsToReencrypt(
        _ revocation: RevocationResponse, since cursor: Int64
    ) async throws -> (records: [RecordResponse], cursor: Int64) {
        let version = revocation.fromFMKVersion
        return try await changes(revocation.familyMemberID, since: cursor, pageSize: 1000) { page in
            guard page.currentFMKVersion == version, page.records.allSatisfy({ $0.fmkVersion == version }) else {
                throw Self.versionConflict("the FMK changed while the records were downloaded")
            }
        }
    }

    /// The answer the service gives when the family member moved on: refresh and begin again.
    static func versionConflict(_ message: String) -> GrantServiceError {
        GrantServiceError(status: 409, code: "version_conflict", message: message)
    }

    /// Everyone who keeps access, each with keys verified by the one rule (`verifiedRecipient`).
    /// Who keeps access is the verified history's business, not the service's: exactly the
    /// holders of the version before, less the revoked user. A service that adds someone (to be
    /// handed the key) or leaves someone out (a revocation nobody asked for) is refused.
    /// - Throws: `KeyHistoryError` `.unverifiedRecipientKey`, reported.
    func verifiedRecipients(
        _ grantees: [UserResponse], of revocation: RevocationResponse, verified: KeyHistoryStore.Entry
    ) async throws -> [UserResponse] {
        let holders = Set(verified.head.statement.holders.map(\.userID)).subtracting(revocation.revokedUserID.map { [$0] } ?? [])
        let offered = grantees.map(\.userID)
        guard Set(offered) == holders, offered.count == holders.count else {
            let added = Set(offered).subtracting(holders), missing = holders.subtracting(offered)
            let error = KeyHistoryError(
                .unverifiedRecipientKey, familyMemberID: revocation.familyMemberID, statementSeq: verified.seq,
                "the grant service names other holders to keep access than the owner's history (added: "
                    + "\(added.map { $0.uuidString.lowercased() }.sorted()), left out: \(missing.map { $0.uuidString.lowercased() }.sorted())); nothing was wrapped")
            await report(error, offeredVersion: nil, verifiedSeq: verified.seq)
            throw error
        }
        var recipients: [UserResponse] = []
        for grantee in grantees {
            // My own copy is wrapped under my master key: no public key of anyone's is used.
            recipients.append(
                grantee.userID == keys.userID
                    ? grantee : try await verifiedRecipient(grantee.userID, offered: grantee, in: verified, for: .keepsAccess))
        }
        return recipients
    }

    /// My own copy is wrapped under my master key; everyone else's from my X25519 key to theirs.
    /// Only for keys `verifiedRecipient` returned.
    func newGrant(_ fmk: SecretKey, for grantee: UserResponse, familyMemberID: UUID, version: Int) throws -> NewGrant {
        if grantee.userID == keys.userID {
            let wrapped = try FMKWrapping.wrapForOwner(
                fmk, familyMemberID: familyMemberID, version: UInt32(version), masterKey: keys.masterKey)
            return NewGrant(granteeUserID: grantee.userID, wrapping: .self, wrappedFMK: Data(wrapped))
        }
        let wrapped = try FMKWrapping.wrap(
            fmk, familyMemberID: familyMemberID, version: UInt32(version), granter: keys.agreementKey,
            grantee: try X25519.PublicKey(rawRepresentation: [UInt8](grantee.agreementPublicKey)))
        return NewGrant(
            granteeUserID: grantee.userID, wrapping: .ecdh, wrappedFMK: Data(wrapped),
            granteeAgreementPublicKey: grantee.agreementPublicKey)
    }
}
