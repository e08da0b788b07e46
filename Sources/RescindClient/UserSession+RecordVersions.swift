import Foundation
import RescindCrypto
import RescindProtocol

extension UserSession {
    /// The deleted and overwritten records a family member I own keeps, newest first, each
    /// restorable for `retentionDays` after it was replaced (open one with `RecordCipher.open`
    /// of its `asRecord` under the current FMK).
    /// - Throws: `GrantServiceError` 403 unless I own the family member.
    public func trash(_ familyMemberID: UUID) async throws -> RecordVersionList {
        try await client.recordVersions(familyMemberID)
    }

    /// Restores a deleted or overwritten record: the latest kept version, or `versionID`. The
    /// record it replaces, if any, is kept in turn, so a restore can be undone.
    /// - Throws: `GrantServiceError` 403 unless I own the family member, 404
    ///   `no_restorable_version`, 410 `restore_window_passed`, 422 `record_of_other_family_member`.
    public func restoreRecord(_ familyMemberID: UUID, _ recordID: UUID, version versionID: UUID? = nil) async throws -> RecordResponse {
        try await client.restoreRecord(familyMemberID, recordID, version: versionID)
    }

    /// For a revocation or rotation in progress: re-encrypts the kept versions not staged yet
    /// (`staged`) from `oldFMK` to `newFMK` and uploads them, as the records are. The commit
    /// refuses to leave one under the old FMK (409 `records_changed`), so this runs before every
    /// commit attempt and picks up versions made meanwhile.
    /// - Returns: how many versions were uploaded now.
    func stageVersions(
        _ revocation: RevocationResponse, from oldFMK: SecretKey, to newFMK: SecretKey, staged: inout Set<UUID>,
        batchSize: Int
    ) async throws -> Int {
        let pending = try await client.recordVersions(revocation.familyMemberID).versions.filter { !staged.contains($0.versionID) }
        guard !pending.isEmpty else { return 0 }
        guard pending.allSatisfy({ $0.fmkVersion == revocation.fromFMKVersion }) else {
            throw Self.versionConflict("the FMK changed while the kept versions were downloaded")
        }
        let resealed = try await RecordCipher.reseal(
            pending.map(\.asRecord), from: oldFMK, to: newFMK, newVersion: revocation.newFMKVersion)
        let uploads = zip(pending, resealed).map { version, sealed in
            StagedRecordVersion(versionID: version.versionID, nonce: sealed.nonce, ciphertext: sealed.ciphertext, tag: sealed.tag)
        }
        for start in stride(from: 0, to: uploads.count, by: max(1, batchSize)) {
            let batch = Array(uploads[start..<min(start + max(1, batchSize), uploads.count)])
            _ = try await client.uploadRevocationVersions(revocation.revocationID, batch)
            staged.formUnion(batch.map(\.versionID))
        }
        return uploads.count
    }
}
