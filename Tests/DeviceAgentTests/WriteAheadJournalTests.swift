import Foundation
import Synchronization
import RescindClient
import RescindCrypto
import Testing

@testable import DeviceAgent

/// The cache's journal is a write-ahead log synced at every commit (one sync per transaction
/// instead of the rollback journal's three), and what an erasure removes is in
/// no file once the erasure returns, with the store still open: the log's old page images are
/// checkpointed into the database and the log truncated before anything else runs.
@Suite("Write-ahead journal")
struct WriteAheadJournalTests {
    @Test("the cache commits through a write-ahead log with synchronous=FULL: a commit is durable when it returns")
    func journalSettings() async throws {
        let fixture = try await LockableFixture()
        defer { fixture.directory.remove() }
        let settings = try await fixture.engine.store.journalSettings()
        #expect(settings.mode == "wal")
        #expect(settings.synchronous == 2, "FULL; GRDB's own WAL setting would be NORMAL (1), durable only at checkpoints")
        #expect(settings.secureDelete)
        // A new cache's pages hold seven 2 KiB records, not one (a rotation's log ~1.2 MB, not ~2 MB).
        #expect(settings.pageSize == 16_384 && AgentStore.pageSize == 16_384)
    }

    @Test("an erasure returns with the log truncated and no file holding the erased ciphertext or wrapped FMK, the store still open")
    func erasureScrubsTheLog() async throws {
        let fixture = try await LockableFixture()
        defer { fixture.directory.remove() }
        let kept = UUID()
        let erasing = UUID()
        try await fixture.cache(kept, version: 1, count: 5)
        let erased = try await fixture.cache(erasing, version: 1, count: 20)
        let wrapped = try #require(try await fixture.engine.store.familyMember(erasing)?.wrappedFMK)
        // Before: the log holds the rotations' page images, ciphertext included.
        let log = fixture.configuration.databasePath + "-wal"
        let before = try FileManager.default.attributesOfItem(atPath: log)[.size] as? Int ?? 0
        #expect(before > 0, "the cache's commits went through the log")

        let effect = try await fixture.engine.store.apply(.erase(erasing, floor: 2))
        #expect(effect.changed && effect.recordsProcessed == 20)

        let after = (try? FileManager.default.attributesOfItem(atPath: log)[.size] as? Int) ?? 0
        #expect(after == 0, "the log is truncated once the erasure returns")
        let files = try fixture.directory.allFileBytes()
        #expect(files.contains { $0.name.hasSuffix("cache.sqlite") })
        for (name, bytes) in files {
            #expect(!bytes.contains(bytes: [UInt8](wrapped)), "wrapped FMK in \(name)")
            for record in erased.records {
                #expect(!bytes.contains(bytes: [UInt8](record.ciphertext)), "erased ciphertext in \(name)")
            }
        }
        // The family member kept is intact and still reads.
        #expect(try await fixture.engine.store.records(of: kept).count == 5)
        #expect(try await fixture.engine.store.familyMember(kept)?.fmkVersion == 1)
    }

    /// The erasing device acked last in half the fan-out bench's revocations, its ack waiting
    /// ~100 ms behind two VACUUMs that only compact a file already holding no erased byte.
    @Test("an erasure on the rollback journal owes its ack before its compaction, with no erased byte in any file; publishing the ack compacts")
    func erasureAckBeforeCompaction() async throws {
        let fixture = try await LockableFixture()
        defer { fixture.directory.remove() }
        let store = fixture.engine.store
        let erasing = UUID()
        let erased = try await fixture.cache(erasing, version: 1, count: 20)
        let wrapped = [UInt8](try #require(try await store.familyMember(erasing)?.wrappedFMK))
        #expect(try await store.enqueue(fixture.command(.secureDeletion, erasing, version: 2)) == .new)
        try await fixture.engine.processPendingCommands()

        let ack = try #require(try await fixture.owedAcks().first)
        #expect(ack.outcome == .applied && ack.action == .secureDeletion)
        #expect(try await store.read { try AgentStore.vacuumPending(in: $0) }, "the compaction is left for after the ack")
        func expectNoErasedByte(_ when: String) throws {
            for (name, bytes) in try fixture.directory.allFileBytes() {
                #expect(!bytes.contains(bytes: wrapped), "wrapped FMK in \(name) \(when)")
                #expect(!erased.records.contains { bytes.contains(bytes: [UInt8]($0.ciphertext)) }, "erased ciphertext in \(name) \(when)")
            }
        }
        try expectNoErasedByte("while the ack is owed")

        try await store.markSent([ack.ackID])
        #expect(try await !store.read { try AgentStore.vacuumPending(in: $0) }, "published: compacted")
        try expectNoErasedByte("after the compaction")
        #expect(try await store.journalSettings().mode == "wal")
    }

    struct Refused: Error {}

    @Test("bookkeeping (offset marks, acks and receipts marked sent) commits without a sync; the connection is FULL again after it, even when it fails")
    func bookkeepingIsNotSynced() async throws {
        let fixture = try await LockableFixture()
        defer { fixture.directory.remove() }
        let store = fixture.engine.store
        #expect(try await store.write(synced: false) { db in try AgentStore.synchronous(in: db) } == 1, "NORMAL: COMMIT writes the log, no sync")
        #expect(try await store.write { db in try AgentStore.synchronous(in: db) } == 2, "every other transaction stays synced")
        #expect(try await store.journalSettings().synchronous == 2)

        // A failing unsynced transaction changes nothing and leaves the connection at FULL.
        await #expect(throws: AgentError.self) { _ = try await store.write(synced: false) { _ -> Int in throw Refused() } }
        #expect(try await store.journalSettings().synchronous == 2)

        // The offset mark, unsynced, is seen by a second connection at once (a killed process
        // loses nothing: the log's pages are in the kernel's cache); what a power cut could
        // lose of it is the state `CrashRecoveryTests` already covers (offset never marked,
        // acks never marked sent: redelivery recognised, acks sent again and kept once).
        let member = UUID()
        try await fixture.cache(member, version: 1, count: 2)
        let command = fixture.command(.fmkRotation, member, version: 2)
        #expect(try await store.enqueue(command) == .new)
        try await store.markOffsetCommitted(command.commandID)
        #expect(try await store.journalSettings().synchronous == 2)
        let reopened = try AgentStore(path: fixture.configuration.databasePath)
        #expect(try await reopened.enqueue(command) == .duplicate(done: false, offsetCommitted: true))
    }

    /// What a crash between an erasure's commit and its scrub leaves on disk, looked at from
    /// inside that window (the files as a SIGKILL there leaves them: every commit is written
    /// to them before it returns). Through the write-ahead log (the design before this test),
    /// the log still holds the erased ciphertext and wrapped FMK; on the rollback journal
    /// (`write(erasing: true)`, what an erasure uses) no file does.
    @Test(
        "between an erasure's commit and its scrub: through the log the erased bytes are still in a file, on the rollback journal in none",
        arguments: [false, true])
    func erasureCommitBeforeScrub(rollbackJournal: Bool) async throws {
        let fixture = try await LockableFixture()
        defer { fixture.directory.remove() }
        let erasing = UUID()
        let erased = try await fixture.cache(erasing, version: 1, count: 20)
        let wrapped = [UInt8](try #require(try await fixture.engine.store.familyMember(erasing)?.wrappedFMK))
        let ciphertexts = erased.records.map { [UInt8]($0.ciphertext) }
        let directory = fixture.directory
        let seen = Findings()
        _ = try await fixture.engine.store.write(
            erasing: rollbackJournal,
            afterCommit: {
                let found = ((try? directory.allFileBytes()) ?? []).flatMap { name, bytes in
                    (bytes.contains(bytes: wrapped) ? ["\(name): wrapped FMK"] : [])
                        + (ciphertexts.contains { bytes.contains(bytes: $0) } ? ["\(name): ciphertext"] : [])
                }
                seen.files.withLock { $0 = found }
            }
        ) { db in try AgentStore.apply(.erase(erasing, floor: 2), in: db) }
        let found = try #require(seen.files.withLock { $0 }, "the hook ran between the commit and the scrub")
        if rollbackJournal {
            #expect(found.isEmpty, "erased bytes in a file right after the commit: \(found)")
        } else {
            #expect(found.contains { $0.contains("-wal: ciphertext") }, "the log keeps the erased ciphertext until the scrub: \(found)")
        }
        // Either way, once the write returned and the VACUUM ran, no file holds them.
        try await fixture.engine.store.vacuumIfNeeded()
        for (name, bytes) in try fixture.directory.allFileBytes() {
            #expect(!bytes.contains(bytes: wrapped), "wrapped FMK in \(name)")
            #expect(!ciphertexts.contains { bytes.contains(bytes: $0) }, "erased ciphertext in \(name)")
        }
        #expect(try await fixture.engine.store.journalSettings().mode == "wal", "back on the write-ahead log")
    }
}

/// What the hook between an erasure's commit and its scrub found on disk.
private final class Findings: Sendable {
    let files = Mutex<[String]?>(nil)
}
