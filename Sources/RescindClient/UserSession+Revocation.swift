import Foundation
import RescindCrypto
import RescindProtocol

/// How far a revocation has come, for progress bars.
public struct RevocationProgress: Sendable, Equatable {
    public enum Phase: String, Sendable {
        case downloading, reencrypting, uploading, committing, committed
    }

    public var phase: Phase
    public var recordsDone: Int
    public var recordsTotal: Int
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
        return try await complete(revocation, uploadBatchSize: uploadBatchSize, progress: progress)
    }

    /// Stolen device: revokes a user from every family member I own, one atomic commit each.
    public func revokeEverywhere(
        user revokedUserID: UUID, reason: String? = nil, progress: @Sendable (RevocationProgress) -> Void = { _ in }
    ) async throws -> [RevocationCommitted] {
        var committed: [RevocationCommitted] = []
        for revocation in try await client.beginUserRevocation(revokedUserID, BeginUserRevocationRequest(reason: reason)) {
            committed.append(try await complete(revocation, uploadBatchSize: 500, progress: progress))
        }
        return committed
    }

    /// Re-encrypts, uploads and commits a begun revocation; abandons it on failure.
    public func complete(
        _ revocation: RevocationResponse, uploadBatchSize: Int, progress: @Sendable (RevocationProgress) -> Void
    ) async throws -> RevocationCommitted {
        let started = ContinuousClock.now
        do {
            let total = revocation.recordIDs.count
            progress(RevocationProgress(phase: .downloading, recordsDone: 0, recordsTotal: total))
            let (oldFMK, version) = try await currentFMK(revocation.familyMemberID)
            guard version == revocation.fromFMKVersion else {
                throw GrantServiceError(status: 409, code: "version_conflict", message: "the FMK changed since the revocation began")
            }
            let expected = Set(revocation.recordIDs)
            let records = try await allRecords(revocation.familyMemberID).filter { expected.contains($0.recordID) }

            let newFMK = SecretKey()
            progress(RevocationProgress(phase: .reencrypting, recordsDone: 0, recordsTotal: total))
            let staged = try await RecordCipher.reseal(records, from: oldFMK, to: newFMK, newVersion: revocation.newFMKVersion)

            var uploaded = 0
            progress(RevocationProgress(phase: .uploading, recordsDone: 0, recordsTotal: total))
            for start in stride(from: 0, to: staged.count, by: max(1, uploadBatchSize)) {
                let batch = Array(staged[start..<min(start + uploadBatchSize, staged.count)])
                _ = try await client.uploadRevocationBatch(revocation.revocationID, batch)
                uploaded += batch.count
                progress(RevocationProgress(phase: .uploading, recordsDone: uploaded, recordsTotal: total))
            }

            let grants = try revocation.remainingGrantees.map { grantee in
                try newGrant(newFMK, for: grantee, familyMemberID: revocation.familyMemberID, version: revocation.newFMKVersion)
            }
            progress(RevocationProgress(phase: .committing, recordsDone: uploaded, recordsTotal: total))
            let elapsed = ContinuousClock.now - started
            let committed = try await client.commitRevocation(
                revocation.revocationID,
                CommitRevocationRequest(
                    newFMKVersion: revocation.newFMKVersion, grants: grants,
                    clientDurationMs: Int(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)))
            progress(RevocationProgress(phase: .committed, recordsDone: uploaded, recordsTotal: total))
            return committed
        } catch {
            try? await client.abandonRevocation(revocation.revocationID)
            throw error
        }
    }

    /// My own copy is wrapped under my master key; everyone else's from my X25519 key to theirs.
    func newGrant(_ fmk: SecretKey, for grantee: UserResponse, familyMemberID: UUID, version: Int) throws -> NewGrant {
        if grantee.userID == keys.userID {
            let wrapped = try FMKWrapping.wrapForOwner(
                fmk, familyMemberID: familyMemberID, version: UInt32(version), masterKey: keys.masterKey)
            return NewGrant(granteeUserID: grantee.userID, wrapping: .self, wrappedFMK: Data(wrapped))
        }
        let wrapped = try FMKWrapping.wrap(
            fmk, familyMemberID: familyMemberID, version: UInt32(version), granter: keys.agreementKey,
            grantee: try X25519.PublicKey(rawRepresentation: [UInt8](grantee.agreementPublicKey)))
        return NewGrant(granteeUserID: grantee.userID, wrapping: .ecdh, wrappedFMK: Data(wrapped))
    }
}
