import Foundation
import RescindClient
import RescindProtocol
import Testing

@testable import DeviceAgent

/// The ack publisher holds a `delivered` receipt back while its command is pending, so that a
/// quick command's receipt leaves in one batch with its ack (docs/benchmarks.md, commit → last ack);
/// a receipt is never held past the hold, nor when the hold is zero, nor for a sealed command.
@Suite("Receipt hold")
struct ReceiptHoldTests {
    private func kinds(_ owed: [AgentStore.OwedAck]) throws -> [DeviceAck.Outcome] {
        try owed.map { try SignedMessage<DeviceAck>.decode($0.message, schema: DeviceAck.schema).payload.outcome }
    }

    @Test("a pending command's receipt waits for its ack and then goes first in the same batch")
    func receiptGoesWithItsAck() async throws {
        let fixture = try await LockableFixture()
        defer { fixture.directory.remove() }
        let member = UUID()
        try await fixture.cache(member, version: 1, count: 3)
        let erasure = fixture.command(.secureDeletion, member, version: 2)
        #expect(try await fixture.engine.store.enqueue(erasure, receipts: try #require(fixture.engine.receipts)) == .new)

        // Pending: the receipt is held, and the publisher is told when it is due.
        let held = try await fixture.engine.store.sendableMessages(holdingReceipts: .seconds(2))
        #expect(held.owed.isEmpty)
        let due = try #require(held.heldFor)
        #expect(due > .zero && due <= .seconds(2))
        // Without a hold it goes at once (what every receipt did before).
        #expect(try kinds(try await fixture.engine.store.sendableMessages(holdingReceipts: .zero).owed) == [.delivered])

        // Done: receipt and ack together, receipt first (the audit service's order); nothing held.
        try await fixture.engine.processPendingCommands()
        let batch = try await fixture.engine.store.sendableMessages(holdingReceipts: .seconds(2))
        #expect(try kinds(batch.owed) == [.delivered, .applied])
        #expect(batch.owed.map(\.isReceipt) == [true, false])
        #expect(batch.heldFor == nil)
        try await fixture.engine.store.markSent(batch.owed.map(\.ackID))
        #expect(try await fixture.engine.store.sendableMessages(holdingReceipts: .seconds(2)).owed.isEmpty)
        #expect(try await fixture.engine.store.counters()["receipts_sent"] == 1)
    }

    @Test("a command that keeps waiting still gets its receipt out once the hold has passed")
    func receiptOfAWaitingCommandGoesAlone() async throws {
        let fixture = try await LockableFixture()
        defer { fixture.directory.remove() }
        let member = UUID()
        try await fixture.cache(member, version: 1, count: 2)
        // A rotation needs the grant service, which this fixture cannot reach: it stays pending.
        let rotation = fixture.command(.fmkRotation, member, version: 2)
        #expect(try await fixture.engine.store.enqueue(rotation, receipts: try #require(fixture.engine.receipts)) == .new)
        await #expect(throws: AgentError.self) { try await fixture.engine.processPendingCommands() }
        #expect(try await fixture.engine.store.pendingCommands().map(\.commandID) == [rotation.commandID])

        // Still within a long hold; past a hold shorter than its age (which only grows), it goes.
        #expect(try await fixture.engine.store.sendableMessages(holdingReceipts: .seconds(60)).owed.isEmpty)
        try await Task.sleep(for: .milliseconds(150))
        let late = try await fixture.engine.store.sendableMessages(holdingReceipts: .milliseconds(100))
        #expect(try kinds(late.owed) == [.delivered])
        #expect(late.heldFor == nil)
    }

    @Test("a sealed command's not_now receipt is never held")
    func sealedReceiptIsNotHeld() async throws {
        let fixture = try await LockableFixture()
        defer { fixture.directory.remove() }
        let member = UUID()
        try await fixture.cache(member, version: 1, count: 2)
        try await fixture.engine.lock()
        guard case .sealed = try await fixture.engine.receiveLocked(fixture.command(.fmkRotation, member, version: 2)) else {
            throw AgentError(.storage, "not sealed")
        }
        let owed = try await fixture.engine.store.sendableMessages(holdingReceipts: .seconds(60))
        #expect(try kinds(owed.owed) == [.notNow])
        #expect(owed.heldFor == nil)
    }
}
