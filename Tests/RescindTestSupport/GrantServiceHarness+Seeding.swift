import Foundation
import RescindClient
import RescindCrypto
import RescindPostgres
import RescindProtocol

extension GrantServiceHarness {
    /// Stores `count` records for a family member straight into PostgreSQL with binary
    /// COPY — sealed exactly as a device would — so that large revocations are quick to set up.
    /// - Returns: record id → plaintext.
    public func seedRecords(
        _ familyMemberID: UUID, count: Int, plaintextBytes: Int, fmk: SecretKey, version: Int = 1
    ) async throws -> [UUID: [UInt8]] {
        var plaintexts: [UUID: [UInt8]] = [:]
        let sealed = try (0..<count).map { index -> (UUID, PutRecordRequest) in
            let id = UUID()
            let plaintext = Array("record \(index) ".utf8) + [UInt8](repeating: UInt8(index % 251), count: plaintextBytes)
            plaintexts[id] = plaintext
            return (id, try RecordCipher.seal(plaintext, recordID: id, version: version, fmk: fmk))
        }
        // Bodies once into `record_bodies`, then the narrow rows naming them (migration 0014).
        let bodyIDs = sealed.map { _ in UUID() }
        _ = try await withConnection { connection in
            try await connection.copyFrom(table: "record_bodies", columns: ["body_id", "nonce", "ciphertext", "tag"]) { writer in
                for ((_, record), bodyID) in zip(sealed, bodyIDs) {
                    try writer.append(bodyID, record.nonce, record.ciphertext, record.tag)
                }
            }
            try await connection.copyFrom(
                table: "records", columns: ["record_id", "family_member_id", "fmk_version", "body_id"]
            ) { writer in
                for ((id, _), bodyID) in zip(sealed, bodyIDs) {
                    try writer.append(id, familyMemberID, Int32(version), bodyID)
                }
            }
        }
        return plaintexts
    }
}
