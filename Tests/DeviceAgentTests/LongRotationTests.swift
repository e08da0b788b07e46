import Foundation
import RescindClient
import RescindCrypto
import RescindProtocol
import RescindTestSupport
import Testing

@testable import DeviceAgent

/// A family member longer than one page of the change feed is downloaded page by page
/// into the store's incoming table (so the agent never holds it all in memory) and swapped
/// into the cache in one transaction.
@Suite("Rotations longer than one page stream through the incoming table", .serialized)
struct LongRotationTests {
    static let recordCount = 2_500

    /// A family member of `recordCount` records shared with two users, one of whom has an
    /// agent that has synced it (three pages: staged, not held in memory).
    static func withSyncedAgent(
        _ body: (GrantServiceHarness, UserSession, UserSession, UUID, [UUID: [UInt8]], DeviceAgent) async throws -> Void
    ) async throws {
        try await GrantServiceHarness.with { service in
            let (owner, kept, other) = (try await service.user("Adult A"), try await service.user("Adult B"), try await service.user("Adult C"))
            let (id, fmk) = try await owner.createFamilyMember()
            let plaintexts = try await service.seedRecords(id, count: recordCount, plaintextBytes: 64, fmk: fmk)
            try await owner.grant(id, to: kept.keys.userID)
            try await owner.grant(id, to: other.keys.userID)
            let device = try await AgentTestKit.enrol(kept, on: service, name: "kept")
            defer { device.directory.remove() }
            let agent = try await device.open()
            try await agent.selfHeal()
            try await body(service, owner, other, id, plaintexts, agent)
        }
    }

    @Test("a 2,500-record family member syncs and rotates page by page; nothing stays staged")
    func pagesAreStagedAndSwapped() async throws {
        try await Self.withSyncedAgent { _, owner, other, id, plaintexts, agent in
            #expect(try await agent.plaintexts(of: id) == plaintexts)
            #expect(try await agent.engine.store.incomingCount() == 0)

            // Two records deleted on the service, then a revocation: the rotation drops them.
            let gone = Array(plaintexts.keys.prefix(2))
            for recordID in gone { try await owner.client.deleteRecord(id, recordID) }
            _ = try await owner.revoke(id, user: other.keys.userID)
            try await agent.selfHeal()
            let expected = plaintexts.filter { !gone.contains($0.key) }
            #expect(try await agent.plaintexts(of: id) == expected)
            #expect(try await agent.engine.store.records(of: id).allSatisfy { $0.fmkVersion == 2 })
            #expect(try await agent.engine.store.incomingCount() == 0)
        }
    }

    @Test("a record that fails to verify on a later page refuses the rotation: the old cache stays, nothing stays staged")
    func aTamperedLaterPageFailsClosed() async throws {
        try await Self.withSyncedAgent { service, owner, other, id, plaintexts, agent in
            _ = try await owner.revoke(id, user: other.keys.userID)
            // The last record of the feed (on its last page) no longer authenticates.
            try await service.withConnection { connection in
                try await connection.execute(
                    """
                    UPDATE record_bodies SET tag = \(Data(count: 16)) WHERE body_id =
                        (SELECT body_id FROM records WHERE family_member_id = \(id) ORDER BY change_seq DESC LIMIT 1)
                    """)
            }
            let report = try await agent.engine.selfHeal()
            #expect(report.refused == [id] && report.rotated.isEmpty)
            #expect(try await agent.plaintexts(of: id) == plaintexts)
            #expect(try await agent.engine.store.records(of: id).allSatisfy { $0.fmkVersion == 1 })
            #expect(try await agent.engine.store.incomingCount() == 0)
        }
    }

    @Test("rows an interrupted download staged survive a status reader and are gone when the agent opens")
    func leftoversAreClearedWhenTheAgentOpens() async throws {
        try await GrantServiceHarness.with { service in
            let user = try await service.user("Adult B")
            let device = try await AgentTestKit.enrol(user, on: service, name: "kept")
            defer { device.directory.remove() }
            let record = RecordResponse(
                recordID: UUID(), familyMemberID: UUID(), fmkVersion: 2, nonce: Data(count: 12), ciphertext: Data(count: 64),
                tag: Data(count: 16), changeSeq: 1)
            let path = device.configuration.databasePath
            try await AgentStore(path: path).stageIncoming(download: UUID(), records: [record], deleted: [], atRest: nil)
            // `rescind-agent status` opens the database while a download may be running.
            _ = try await AgentStatus.read(configuration: device.configuration)
            #expect(try await AgentStore(path: path).incomingCount() == 1)
            _ = try await device.open()
            #expect(try await AgentStore(path: path).incomingCount() == 0)
        }
    }

    @Test("a staged download that lost rows is never swapped in: the rotation fails as disturbed and changes nothing")
    func aDisturbedDownloadIsRefused() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try AgentStore(path: directory.file("agent.sqlite"))
        let id = UUID()
        func record(version: Int, seq: Int64) -> RecordResponse {
            RecordResponse(
                recordID: UUID(), familyMemberID: id, fmkVersion: version, nonce: Data(count: 12),
                ciphertext: Data(repeating: UInt8(version), count: 64), tag: Data(count: 16), changeSeq: seq)
        }
        let cached = (1...3).map { record(version: 1, seq: Int64($0)) }
        _ = try await store.apply(
            .rotate(RotationResult(familyMemberID: id, fmkVersion: 1, wrappedFMK: Data(count: 40), records: .inMemory(cached), cursor: 3)))

        // Three records downloaded, one of them cleared by someone else before the swap.
        let download = UUID()
        let incoming = (4...6).map { record(version: 2, seq: Int64($0)) }
        try await store.stageIncoming(download: download, records: incoming, deleted: [incoming[0].recordID], atRest: nil)
        let error = await #expect(throws: AgentError.self) {
            try await store.apply(
                .rotate(
                    RotationResult(
                        familyMemberID: id, fmkVersion: 2, wrappedFMK: Data(count: 40), records: .staged(download: download, count: 3),
                        cursor: 6)))
        }
        #expect(error?.code == .downloadDisturbed && error?.isTransient == true)
        #expect(try await store.familyMember(id)?.fmkVersion == 1)
        #expect(try await store.records(of: id).map(\.recordID) == cached.map(\.recordID))
    }

    /// The swap runs in statements of `swapChunk` staged rows (a single statement kept every
    /// overwritten page in an in-memory statement journal: 23 MB at 10,000 records; that bound is
    /// shown by the bench's memory figure, not here). What it moves: pages of
    /// two downloads interleaved in the staging table, a count that is not a multiple of the
    /// chunk, and rows deleted inside the download: exactly this download's rows move, once.
    @Test("a staged download longer than a swap chunk, interleaved with another, moves all of its rows and none of the other's")
    func theSwapMovesOneDownloadInChunks() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try AgentStore(path: directory.file("agent.sqlite"))
        let (id, otherID) = (UUID(), UUID())
        func record(_ member: UUID, version: Int, seq: Int64, id recordID: UUID = UUID()) -> RecordResponse {
            RecordResponse(
                recordID: recordID, familyMemberID: member, fmkVersion: version, nonce: Data(count: 12),
                ciphertext: Data(repeating: UInt8(version), count: 64), tag: Data(count: 16), changeSeq: seq)
        }
        let count = Int(AgentStore.swapChunk) * 2 + 234
        let cached = (0..<count).map { record(id, version: 1, seq: Int64($0)) }
        _ = try await store.apply(
            .rotate(RotationResult(familyMemberID: id, fmkVersion: 1, wrappedFMK: Data(count: 40), records: .inMemory(cached), cursor: 0)))

        // Version 2 of every record (plus one new), staged in pages of 300, with a page of another
        // download (another family member) between each, and one record deleted in the last page.
        let (download, other) = (UUID(), UUID())
        var incoming = cached.map { record(id, version: 2, seq: $0.changeSeq + 10_000, id: $0.recordID) }
        incoming.append(record(id, version: 2, seq: 20_000))
        let deleted = incoming[5].recordID
        var pages = stride(from: 0, to: incoming.count, by: 300).map { Array(incoming[$0..<min($0 + 300, incoming.count)]) }
        for (index, page) in pages.enumerated() {
            let isLast = index == pages.count - 1
            try await store.stageIncoming(download: download, records: page, deleted: isLast ? [deleted] : [], atRest: nil)
            let strangers = (0..<50).map { record(otherID, version: 7, seq: Int64(index * 50 + $0)) }
            try await store.stageIncoming(download: other, records: strangers, deleted: [], atRest: nil)
        }
        pages.removeAll()
        _ = try await store.apply(
            .rotate(
                RotationResult(
                    familyMemberID: id, fmkVersion: 2, wrappedFMK: Data(count: 40),
                    records: .staged(download: download, count: incoming.count - 1), cursor: 20_000)))

        let rows = try await store.records(of: id)
        #expect(rows.count == incoming.count - 1)
        #expect(rows.allSatisfy { $0.fmkVersion == 2 })
        #expect(Set(rows.map(\.recordID)) == Set(incoming.map(\.recordID)).subtracting([deleted]))
        #expect(try await store.incomingCount(download: download) == 0)
        #expect(try await store.incomingCount(download: other) == 50 * ((incoming.count + 299) / 300))
        #expect(try await store.records(of: otherID).isEmpty)
    }

    /// The erasure of a long family member poisons its rows a batch at a time (it read them
    /// all at once before: ~20 MB for 10,000 records): every row, once, none left readable.
    @Test("an erasure of more records than one batch overwrites every row, each under the ephemeral key")
    func aLongErasurePoisonsEveryRow() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try AgentStore(path: directory.file("agent.sqlite"))
        let id = UUID()
        let cached = (0..<1_234).map { index in
            RecordResponse(
                recordID: UUID(), familyMemberID: id, fmkVersion: 1, nonce: Data(count: 12),
                ciphertext: Data(repeating: 0xA5, count: 64), tag: Data(count: 16), changeSeq: Int64(index))
        }
        _ = try await store.apply(
            .rotate(RotationResult(familyMemberID: id, fmkVersion: 1, wrappedFMK: Data(count: 40), records: .inMemory(cached), cursor: 0)))
        let effect = try await store.apply(.erase(id, floor: 2))
        #expect(effect.recordsProcessed == cached.count)
        let rows = try await store.records(of: id)
        #expect(rows.count == cached.count)
        #expect(rows.allSatisfy { $0.fmkVersion == 0 && $0.ciphertext != Data(repeating: 0xA5, count: 64) })
        #expect(Set(rows.map(\.recordID)) == Set(cached.map(\.recordID)))
        #expect(try await store.familyMember(id)?.status == .revoked)
    }
}
