import Foundation
import RescindCrypto
import RescindPostgres
import RescindProtocol
import Testing

@testable import AuditService

/// The chain detects an altered, removed or reordered entry, naming where it shows.
@Suite struct ChainVerificationTests {
    /// Five entries for one family member; returns their log ids in chain order.
    static func chainOfFive(_ bed: AuditTestBed, _ emma: TestFamily) async throws -> [UUID] {
        try await bed.publish(emma.accessEvent(.familyMemberCreated))
        for _ in 0..<4 { try await bed.publish(emma.accessEvent(.accessGranted, target: UUID())) }
        try await bed.eventually("five entries") { try await bed.count("SELECT count(*) FROM audit_log") == 5 }
        return try await bed.withConnection { connection in
            try await connection.query(
                "SELECT log_id FROM audit_log WHERE family_member_id = \(emma.familyMemberID) ORDER BY seq"
            ).map { try $0.decode(UUID.self, column: 0) }
        }
    }

    static func verify(_ bed: AuditTestBed, _ familyMemberID: UUID) async throws -> ChainVerificationReport {
        try await bed.withConnection { connection in
            try await AuditChainVerifier(publicKey: bed.service.auditKey).verify(familyMemberID: familyMemberID, on: connection)
        }
    }

    @Test func anIntactChainVerifies() async throws {
        try await AuditTestBed.with { bed in
            let emma = TestFamily()
            _ = try await Self.chainOfFive(bed, emma)
            let report = try await Self.verify(bed, emma.familyMemberID)
            #expect(report.valid)
            #expect(report.entries == 5)
            #expect(report.problems.isEmpty)
            #expect(report.headHash?.count == 32)
        }
    }

    @Test func alteringOneRowIsDetectedAtThatEntry() async throws {
        try await AuditTestBed.with { bed in
            let emma = TestFamily()
            let ids = try await Self.chainOfFive(bed, emma)
            try await bed.withConnection { connection in
                try await connection.execute(
                    "UPDATE audit_log SET occurred_at = occurred_at - interval '1 day' WHERE log_id = \(ids[2])")
            }
            let report = try await Self.verify(bed, emma.familyMemberID)
            #expect(!report.valid)
            #expect(report.problems.map(\.code) == ["altered"])
            #expect(report.problems.first?.logID == ids[2])
            #expect(report.problems.first?.message.contains(ids[2].uuidString) == true)
        }
    }

    @Test func rewritingAnEntryWithARecomputedHashIsStillDetected() async throws {
        try await AuditTestBed.with { bed in
            let emma = TestFamily()
            let ids = try await Self.chainOfFive(bed, emma)
            // Someone with database access changes the target and recomputes the hash,
            // but cannot sign it; and the next entry no longer links to it.
            try await bed.withConnection { connection in
                let row = try await connection.query(
                    "SELECT \(unescaped: AuditEntry.columns) FROM audit_log WHERE log_id = \(ids[1])").first!
                var entry = try AuditEntry(row: row)
                entry.targetUserID = UUID()
                entry.entryHash = entry.computedHash()
                try await connection.execute(
                    """
                    UPDATE audit_log SET target_user_id = \(entry.targetUserID), entry_hash = \(entry.entryHash)
                    WHERE log_id = \(ids[1])
                    """)
            }
            let report = try await Self.verify(bed, emma.familyMemberID)
            #expect(report.problems.map(\.code) == ["bad_signature", "broken_link"])
            #expect(report.problems.map(\.logID) == [ids[1], ids[2]])
        }
    }

    @Test func removingAnEntryIsDetected() async throws {
        try await AuditTestBed.with { bed in
            let emma = TestFamily()
            let ids = try await Self.chainOfFive(bed, emma)
            try await bed.withConnection { try await $0.execute("DELETE FROM audit_log WHERE log_id = \(ids[2])") }
            let report = try await Self.verify(bed, emma.familyMemberID)
            #expect(!report.valid)
            #expect(report.problems.map(\.code) == ["missing_entries", "broken_link"])
            #expect(report.problems.allSatisfy { $0.logID == ids[3] })

            // Removing the newest entry leaves a consistent chain, but not the head.
            try await bed.withConnection { try await $0.execute("DELETE FROM audit_log WHERE log_id = \(ids[4])") }
            let truncated = try await Self.verify(bed, emma.familyMemberID)
            #expect(truncated.problems.map(\.code).contains("truncated"))
        }
    }

    @Test func reorderingEntriesIsDetected() async throws {
        try await AuditTestBed.with { bed in
            let emma = TestFamily()
            let ids = try await Self.chainOfFive(bed, emma)
            // Swap the positions of entries 2 and 3 (seq 2 <-> 3).
            try await bed.withConnection { connection in
                try await connection.execute("UPDATE audit_log SET seq = 1000 WHERE log_id = \(ids[1])")
                try await connection.execute("UPDATE audit_log SET seq = 2 WHERE log_id = \(ids[2])")
                try await connection.execute("UPDATE audit_log SET seq = 3 WHERE log_id = \(ids[1])")
            }
            let report = try await Self.verify(bed, emma.familyMemberID)
            #expect(!report.valid)
            let located = Set(report.problems.compactMap(\.logID))
            #expect(located.isSuperset(of: [ids[1], ids[2]]))
            #expect(report.problems.contains { $0.code == "broken_link" && $0.logID == ids[2] })
            #expect(report.problems.contains { $0.code == "altered" })
        }
    }

    @Test func chainsOfOtherFamilyMembersAreIndependent() async throws {
        try await AuditTestBed.with { bed in
            let emma = TestFamily(), noah = TestFamily()
            let ids = try await Self.chainOfFive(bed, emma)
            try await bed.publish(noah.accessEvent(.familyMemberCreated))
            try await bed.eventually("noah's entry") { try await bed.count("SELECT count(*) FROM audit_log") == 6 }
            try await bed.withConnection {
                try await $0.execute("UPDATE audit_log SET event_type = 'access_regranted' WHERE log_id = \(ids[0])")
            }
            #expect(try await Self.verify(bed, emma.familyMemberID).valid == false)
            let noahReport = try await Self.verify(bed, noah.familyMemberID)
            #expect(noahReport.valid && noahReport.entries == 1)
        }
    }
}
