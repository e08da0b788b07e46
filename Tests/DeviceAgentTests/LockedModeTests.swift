import Foundation
import RescindClient
import RescindCrypto
import RescindProtocol
import Testing

@testable import DeviceAgent

/// Locked operation without a network: what arrives is sealed, erasures happen at once with
/// their acks drafted, rotations wait, and the unlock signs and queues everything in order.
@Suite("Locked mode")
struct LockedModeTests {
    @Test("locked: an erasure runs at once with no ack yet, a rotation waits sealed; the unlock signs the erasure's ack")
    func erasesLockedAndSignsAtUnlock() async throws {
        let fixture = try await LockableFixture()
        defer { fixture.directory.remove() }
        let rotating = UUID()
        let erasing = UUID()
        try await fixture.cache(rotating, version: 1, count: 2)
        let erased = try await fixture.cache(erasing, version: 1, count: 3)
        try await fixture.engine.lock()
        #expect(fixture.engine.isLocked)
        #expect(throws: AgentError.self) { _ = try fixture.engine.keystore }

        let rotation = fixture.command(.fmkRotation, rotating, version: 2)
        let erasure = fixture.command(.secureDeletion, erasing, version: 2)
        guard case .sealed = try await fixture.engine.receiveLocked(rotation) else { throw AgentError(.storage, "not sealed") }
        guard case .sealed = try await fixture.engine.receiveLocked(erasure) else { throw AgentError(.storage, "not sealed") }

        // The erasure happened without keys; nothing is signed or queued in the clear.
        let state = try #require(try await fixture.engine.store.familyMember(erasing))
        #expect(state.status == .revoked && state.wrappedFMK == nil && state.versionFloor == 2)
        #expect(try await fixture.engine.store.records(of: erasing).allSatisfy { $0.fmkVersion == 0 })
        #expect(try await fixture.engine.store.owedAcks().isEmpty)
        #expect(try await fixture.engine.store.pendingCommands().isEmpty)
        #expect(try await fixture.engine.store.sealedEntries().count == 2)
        #expect(try await fixture.engine.store.familyMember(rotating)?.fmkVersion == 1)
        // Each says not_now, signed by the receipt key its device key certified (the only key
        // a locked agent holds).
        let receipts = try await fixture.owedReceipts()
        #expect(receipts.map(\.outcome) == [.notNow, .notNow])
        #expect(receipts.map(\.commandID) == [rotation.commandID, erasure.commandID])
        #expect(receipts.map(\.fmkVersion) == [1, 1], "what it held before acting")
        // Sealed means sealed: once the receipts are out, the database holds neither command id
        // in any form we wrote.
        try await fixture.engine.store.markSent(receipts.map(\.ackID))
        #expect(try await fixture.engine.store.owedMessages().isEmpty)
        #expect(try await fixture.engine.store.counters()["receipts_sent"] == 2)
        for (name, bytes) in try fixture.directory.allFileBytes() {
            for command in [rotation, erasure] {
                #expect(!bytes.contains(bytes: Array(command.commandID.uuidString.lowercased().utf8)), "command id in \(name)")
            }
        }
        // Nothing the old FMK can open is left of the erased records.
        for record in try await fixture.engine.store.records(of: erasing) {
            let response = RecordResponse(
                recordID: record.recordID, familyMemberID: erasing, fmkVersion: 1, nonce: record.nonce,
                ciphertext: record.ciphertext, tag: record.tag, changeSeq: record.changeSeq)
            #expect(throws: CryptoError.self) { try RecordCipher.open(response, fmk: erased.fmk) }
        }

        // Unlock: the erasure's ack is signed (dated when it was done), the rotation is queued
        // and waits for the unreachable grant service.
        try await fixture.engine.unlock()
        #expect(!fixture.engine.isLocked)
        #expect(try await fixture.engine.store.sealedEntries().isEmpty)
        let acks = try await fixture.owedAcks()
        #expect(acks.count == 1)
        #expect(acks.first?.commandID == erasure.commandID && acks.first?.action == .secureDeletion)
        #expect(acks.first?.outcome == .applied && acks.first?.recordsProcessed == 3 && acks.first?.fmkVersion == 0)
        let error = await #expect(throws: AgentError.self) { try await fixture.engine.processPendingCommands() }
        #expect(error?.code == .unavailable)
        #expect(try await fixture.engine.store.pendingCommands().map(\.commandID) == [rotation.commandID])
    }

    @Test("a redelivered erasure while locked changes nothing and is not acknowledged twice; a replay after commit is")
    func redeliveryAndReplayWhileLocked() async throws {
        let fixture = try await LockableFixture()
        defer { fixture.directory.remove() }
        let member = UUID()
        try await fixture.cache(member, version: 1, count: 2)
        try await fixture.engine.lock()
        let erasure = fixture.command(.secureDeletion, member, version: 2)
        guard case .sealed(let first) = try await fixture.engine.receiveLocked(erasure) else { throw AgentError(.storage, "not sealed") }
        try await fixture.engine.store.markSealedOffsetCommitted(first)
        // Redelivered before its offset was committed (a crash), then replayed after.
        _ = try await fixture.engine.receiveLocked(erasure)
        guard case .sealed(let replay) = try await fixture.engine.receiveLocked(erasure) else { throw AgentError(.storage, "not sealed") }
        try await fixture.engine.store.markSealedOffsetCommitted(replay)
        // One not_now receipt for the three deliveries.
        #expect(try await fixture.owedReceipts().map(\.commandID) == [erasure.commandID])
        try await fixture.engine.unlock()
        let acks = try await fixture.owedAcks()
        #expect(acks.map(\.outcome) == [.applied, .alreadyApplied])
        #expect(Set(acks.map(\.commandID)) == [erasure.commandID])
        #expect(try await fixture.engine.store.counters()["sealed_commands"] == 3)
    }

    @Test("started locked: an erasure left pending in the clear inbox is carried out without keys")
    func pendingErasureAtLockedStart() async throws {
        let fixture = try await LockableFixture()
        defer { fixture.directory.remove() }
        let member = UUID()
        try await fixture.cache(member, version: 1, count: 2)
        let erasure = fixture.command(.secureDeletion, member, version: 2)
        #expect(try await fixture.engine.store.enqueue(erasure) == .new)
        try await fixture.engine.store.markOffsetCommitted(erasure.commandID)

        let locked = AgentEngine(
            configuration: fixture.configuration, identity: fixture.engine.identity, keystore: nil, store: fixture.engine.store,
            logger: AgentTestKit.logger, faults: AgentFaults())
        try await locked.processPendingCommands()
        #expect(try await locked.store.familyMember(member)?.status == .revoked)
        #expect(try await locked.store.pendingCommands().isEmpty)
        #expect(try await locked.store.owedAcks().isEmpty)
        try await locked.unlock()
        #expect(try await fixture.owedAcks().map(\.outcome) == [.applied])
        // A replay after the unlock is answered as for any completed command.
        #expect(try await locked.store.enqueue(erasure) == .duplicate(done: true, offsetCommitted: true))
    }

    @Test("a locked start needs a passphrase file or key file, and a keystore with an inbox key")
    func lockedStartRequirements() async throws {
        let fixture = try await LockableFixture()
        defer { fixture.directory.remove() }
        var configuration = fixture.configuration
        configuration.startLocked = true
        let agent = try await DeviceAgent.open(configuration: configuration, logger: AgentTestKit.logger)
        #expect(agent.isLocked && agent.deviceID == fixture.keystore.deviceID)
        configuration.unlock = .passphrase("lockable fixture passphrase")
        let error = await #expect(throws: AgentError.self) {
            _ = try await DeviceAgent.open(configuration: configuration, logger: AgentTestKit.logger)
        }
        #expect(error?.code == .configuration)
    }
}
