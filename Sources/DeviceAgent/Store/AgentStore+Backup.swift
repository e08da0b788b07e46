import Foundation
import GRDB
import RescindClient

extension AgentStore {
    /// The cache as a key-free `BackupArchive`, read in one transaction (a consistent copy).
    /// - Throws: `AgentError.locked` when records are encrypted at rest and `atRest` is nil.
    func backup(deviceID: UUID, userID: UUID, atRest: AtRestLayer?) async throws -> BackupArchive {
        try await read { db in
            let members = try Row.fetchAll(db, sql: "SELECT * FROM family_members ORDER BY family_member_id").map {
                let state = try FamilyMemberState(row: $0)
                return BackupArchive.Member(
                    familyMemberID: state.familyMemberID, status: state.status.rawValue, fmkVersion: state.fmkVersion,
                    versionFloor: state.versionFloor)
            }
            let records = try Row.fetchAll(
                db, sql: "SELECT * FROM records WHERE fmk_version <> 0 ORDER BY family_member_id, change_seq"
            ).map {
                let record = try Self.cachedRecord($0, atRest: atRest)
                return BackupArchive.Record(
                    recordID: record.recordID, familyMemberID: record.familyMemberID, fmkVersion: record.fmkVersion,
                    nonce: record.nonce, ciphertext: record.ciphertext, tag: record.tag, changeSeq: record.changeSeq)
            }
            return BackupArchive(
                format: BackupArchive.format, deviceID: deviceID, userID: userID, exportedAt: Date(), familyMembers: members,
                records: records)
        }
    }
}
