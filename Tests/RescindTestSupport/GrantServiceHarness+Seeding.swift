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
        _ = try await withConnection { connection in
            try await connection.copyFrom(
                table: "records", columns: ["record_id", "family_member_id", "fmk_version", "nonce", "ciphertext", "tag"]
            ) { writer in
                for (id, record) in sealed {
                    try writer.append(id, familyMemberID, Int32(version), record.nonce, record.ciphertext, record.tag)
                }
            }
        }
        return plaintexts
    }
}
