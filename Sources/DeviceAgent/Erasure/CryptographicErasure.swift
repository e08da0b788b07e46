import Foundation
import GRDB
import RescindClient
import RescindCrypto

/// Cryptographic erasure of one family member's cached records.
///
/// Each cached record, exactly as stored (nonce ‖ ciphertext ‖ tag under the FMK), is sealed
/// again with AES-256-GCM under an ephemeral key drawn here and never written anywhere; the
/// key lives in guarded memory and is zeroed when this function returns. Recovering a record
/// would then need both that key and the FMK, which the caller destroys in the same
/// transaction. No plaintext is ever produced, so erasure works without unwrapping the FMK,
/// and without the at-rest key when the row is under that layer too (`AtRestLayer`).
enum CryptographicErasure {
    /// Overwrites every record row of `familyMemberID` in `db` (inside the caller's
    /// transaction) and returns how many it overwrote. Rows are marked `fmk_version = 0`.
    ///
    /// `batch` rows at a time: a poisoned row leaves the query (`fmk_version <> 0`), so each pass
    /// reads the next ones, and memory holds one batch instead of the whole family member
    /// (~20 MB for 10,000 records of 2 KiB). Each row is its own single-row UPDATE, so no
    /// statement journal grows either (`AgentStore.swapInIncoming`).
    static func poisonRecords(of familyMemberID: UUID, in db: Database, batch: Int = 500) throws -> Int {
        let ephemeral = SecretKey()
        let cipher = AESGCMCipher(key: ephemeral)
        let select = try db.cachedStatement(
            sql: "SELECT record_id, nonce, ciphertext, tag FROM records WHERE family_member_id = ? AND fmk_version <> 0 LIMIT ?")
        let update = try db.cachedStatement(
            sql: "UPDATE records SET fmk_version = 0, at_rest = 0, nonce = ?, ciphertext = ?, tag = ? WHERE record_id = ?")
        var poisoned = 0
        while true {
            let rows = try Row.fetchAll(select, arguments: [familyMemberID.text, batch])
            if rows.isEmpty { return poisoned }
            for row in rows {
                let recordID: String = row["record_id"]
                let stored = [UInt8](row["nonce"] as Data) + [UInt8](row["ciphertext"] as Data) + [UInt8](row["tag"] as Data)
                let box = try cipher.seal(stored, authenticating: Array("rescind/erased/\(recordID)".utf8))
                try update.execute(arguments: [Data(box.nonce), Data(box.ciphertext), Data(box.tag), recordID])
                guard db.changesCount == 1 else {
                    throw AgentError(.storage, "record \(recordID) could not be overwritten during the erasure")
                }
            }
            poisoned += rows.count
        }
    }
}
