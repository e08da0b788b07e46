import Foundation
import RescindClient
import RescindCrypto
import RescindPostgres

/// A family member whose records were written straight into the grant service's tables by
/// binary COPY (bodies into `record_bodies`, the rows naming them into `records`): setting up 100,000 records through the API would take longer than
/// the benchmark. The records are real AES-256-GCM boxes under the family member's FMK v1
/// with the associated data the client uses, so every later step treats them as any other.
struct SeededFamilyMember: Sendable {
    let familyMemberID: UUID
    let fmk: SecretKey
    let recordIDs: [UUID]
    let boxes: [AESGCM.SealedBox]
}

enum RecordSeeder {
    /// Random plaintext of `byteCount` bytes (random, so nothing compresses better than real records).
    static func plaintext(byteCount: Int) -> [UInt8] {
        SecureRandom.bytes(count: byteCount)
    }

    /// `count` records of `byteCount` bytes sealed under `fmk` at `version`, one shared plaintext.
    static func seal(count: Int, byteCount: Int, fmk: SecretKey, version: UInt32) throws -> (ids: [UUID], boxes: [AESGCM.SealedBox]) {
        let plaintext = plaintext(byteCount: byteCount)
        let cipher = AESGCMCipher(key: fmk)
        var ids: [UUID] = []
        var boxes: [AESGCM.SealedBox] = []
        ids.reserveCapacity(count)
        boxes.reserveCapacity(count)
        for _ in 0..<count {
            let id = UUID()
            ids.append(id)
            boxes.append(try cipher.seal(plaintext, authenticating: RecordAssociatedData.make(recordID: id, fmkVersion: version)))
        }
        return (ids, boxes)
    }

    /// Creates a family member owned by `owner` and COPYs `count` records into it.
    static func seed(_ stack: BenchStack, owner: UserSession, count: Int, byteCount: Int) async throws -> SeededFamilyMember {
        let (familyMemberID, fmk) = try await owner.createFamilyMember()
        let (ids, boxes) = try seal(count: count, byteCount: byteCount, fmk: fmk, version: 1)
        try await stack.withConnection { connection in
            try await connection.transaction { connection in
                try await copyRecords(ids: ids, boxes: boxes, familyMemberID: familyMemberID, on: connection)
            }
        }
        return SeededFamilyMember(familyMemberID: familyMemberID, fmk: fmk, recordIDs: ids, boxes: boxes)
    }

    /// Binary COPY of records (FMK version 1) into the product's tables: each body once into
    /// `record_bodies`, then the narrow `records` rows naming them (migration 0014).
    static func copyRecords(
        ids: [UUID], boxes: [AESGCM.SealedBox], familyMemberID: UUID, on connection: PostgresConnection
    ) async throws {
        let bodyIDs = ids.map { _ in UUID() }
        try await connection.copyFrom(table: "record_bodies", columns: ["body_id", "nonce", "ciphertext", "tag"]) { writer in
            for index in ids.indices {
                try writer.append(bodyIDs[index], boxes[index].nonce, boxes[index].ciphertext, boxes[index].tag)
            }
        }
        try await connection.copyFrom(table: "records", columns: ["record_id", "family_member_id", "fmk_version", "body_id"]) {
            writer in
            for index in ids.indices { try writer.append(ids[index], familyMemberID, Int32(1), bodyIDs[index]) }
        }
    }

    /// Binary COPY of records (FMK version 1) into `table`, which has the columns `records` had
    /// before migration 0014 (one row per record, body inline): the benchmarks' baseline.
    @discardableResult
    static func copy(
        ids: [UUID], boxes: [AESGCM.SealedBox], familyMemberID: UUID, into table: String, on connection: PostgresConnection
    ) async throws -> Int {
        try await connection.copyFrom(
            table: table, columns: ["record_id", "family_member_id", "fmk_version", "nonce", "ciphertext", "tag"]
        ) { writer in
            for index in ids.indices {
                let box = boxes[index]
                try writer.append(ids[index], familyMemberID, Int32(1), box.nonce, box.ciphertext, box.tag)
            }
        }
    }
}
