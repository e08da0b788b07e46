import Foundation
import GRDB
import RescindClient
import RescindMacros

/// A record in the local cache, still encrypted.
@MemberwiseInit
struct CachedRecord: Sendable, Equatable {
    var recordID: UUID
    var familyMemberID: UUID
    var fmkVersion: Int
    var nonce: Data
    var ciphertext: Data
    var tag: Data
    var changeSeq: Int64

    init(row: Row) throws {
        guard let id = UUID(uuidString: row["record_id"]), let member = UUID(uuidString: row["family_member_id"]) else {
            throw AgentError(.storage, "a records row is malformed")
        }
        self.init(
            recordID: id, familyMemberID: member, fmkVersion: row["fmk_version"], nonce: row["nonce"],
            ciphertext: row["ciphertext"], tag: row["tag"], changeSeq: row["change_seq"])
    }
}
